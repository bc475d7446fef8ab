import { readdirSync, readFileSync } from 'node:fs'

/** CPU time (ns) each thread of a process has run so far, by thread id (the kernel's schedstat: not the 10 ms ticks of /proc/<pid>/stat) */
export function threadNs(pid: number, into: Map<string, number>): Map<string, number> {
  try {
    for (const task of readdirSync(`/proc/${pid}/task`))
      try {
        into.set(`${pid}/${task}`, Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]))
      } catch {} // a thread that ended meanwhile
  } catch {} // a process that ended
  return into
}

/**
 * A process's main thread (its tid is its pid) from the kernel's schedstat: the ns it has run, and
 * the ns it has waited, runnable, for a core (another thread or process on it); zeros once it ended
 */
export function mainThread(pid: number): { runNs: number; waitNs: number } {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')
    return { runNs: Number(run), waitNs: Number(wait) }
  } catch {
    return { runNs: 0, waitNs: 0 }
  }
}

/** CPU time (ns) of a process's threads now running */
export const cpuNs = (pid: number) => [...threadNs(pid, new Map()).values()].reduce((a, b) => a + b, 0)

/**
 * Wait until the process has used at most 1.5 ms of CPU in 50 ms (its loops woken by the last
 * writes are done), at most `ms`: what is measured next starts on a machine this process has
 * stopped working on.
 */
export async function settle(pid: number, ms = 5000) {
  for (const end = performance.now() + ms; performance.now() < end; ) {
    const a = cpuNs(pid)
    await Bun.sleep(50)
    if (cpuNs(pid) - a <= 1.5e6) return
  }
}

/**
 * What a process costs in CPU so far (ns): its threads and, on PostgreSQL, the server processes
 * (backends) of its own database that `backends` lists, found in pg_stat_activity at each reading (a backend that
 * appeared since the last one counts from its start, which was for this database too). A thread
 * or backend that has ended keeps the time it had at the last reading (a sum over the living ones
 * went down when one of Bun's threads ended).
 */
export function cpuMeter(pid: number, backends: () => Promise<number[]>) {
  const last = new Map<string, number>()
  return async () => {
    const now = threadNs(pid, new Map())
    for (const b of await backends()) threadNs(b, now)
    for (const [k, v] of now) last.set(k, v)
    return [...last.values()].reduce((a, b) => a + b, 0)
  }
}
