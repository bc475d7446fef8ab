import { readdirSync, readFileSync } from 'node:fs'

/** VmRSS of one process, in MB (0 once it has ended). */
function ownMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0 // it ended meanwhile
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    )
  } catch {
    return []
  }
}

/**
 * The server's RSS in MB and that of its child processes (from a checkout the sentence model
 * runs in one while it is loaded): `total` is what the machine gives the server.
 */
export function rssOf(pid: number): { server: number; children: number; total: number } {
  const server = ownMb(pid)
  const all = (p: number): number => childrenOf(p).reduce((sum, c) => sum + ownMb(c) + all(c), 0)
  const children = all(pid)
  return { server, children, total: server + children }
}

/** The server's RSS plus its children's, in MB. */
export const rssMb = (pid: number): number => rssOf(pid).total
