/**
 * The calibration of PGlite's cost limit per write (src/mutate/cost-limit.ts, issue 50 item 3):
 * each kind of batch and revert the estimate tells apart, timed in one process with the server in
 * it (the limit lifted), beside its estimate. The request's wall time is how long it holds PGlite
 * and the event loop: every other tenant's wait; the process's CPU time meanwhile (PGlite runs in
 * it) varies far less on a machine shared with other work. The median of `ROUNDS` (3) runs, each
 * on a project of its own.
 *
 *   bun bench/stall-cost.ts
 */
import { batchCostUs, revertCostUs } from '../src/mutate/cost-limit'
import { startBenchServer } from './lib/app'

const ROUNDS = Number(process.env.ROUNDS ?? 3)
const server = await startBenchServer(undefined, { PGLITE_WRITE_BUDGET_MS: '0' })
let projects = 0
const mutate = async (body: Record<string, unknown>, prefer?: string) => {
  const res = await fetch(`${server.url}/api/v1/mutate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json', ...(prefer ? { prefer } : {}) },
    body: JSON.stringify(body),
  })
  const answer = (await res.json()) as { changeIds?: string[] }
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(answer).slice(0, 300)}`)
  return answer
}
/** A new project: a goal, a need, `n` approaches under it (approach-1 …), each with a job when `jobs`. */
async function project(n: number, jobs: boolean) {
  const projectId = `cost-${++projects}`
  await mutate({ action: 'addProject', project: { name: projectId, id: projectId } })
  await mutate({
    action: 'batch',
    projectId,
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
    ],
  })
  for (let from = 0; from < n; from += 500) {
    const mutations: unknown[] = []
    for (let i = 0; i < Math.min(500, n - from); i++) {
      mutations.push({ action: 'add', node: { id: `draft-a${i}`, type: 'approach', parentId: 'need-1', data: { label: `A${from + i}` } } })
      if (jobs) mutations.push({ action: 'add', node: { type: 'job', parentId: `draft-a${i}`, data: { label: `J${from + i}` } } })
    }
    await mutate({ action: 'batch', projectId, mutations })
  }
  return { projectId, ids: Array.from({ length: n }, (_, i) => `approach-${i + 1}`) }
}
const chain = (ids: string[], count: number) =>
  Array.from({ length: count }, (_, i) => ({ action: 'update', nodeId: ids[i]!, data: { blockedBy: ids.slice(i + 1, i + 51) } }))
const labels = (ids: string[], tag: string) => ids.map((id) => ({ action: 'update', nodeId: id, data: { label: `${tag} ${id}` } }))

/** A case: its setup (untimed), then the timed request and its estimate in µs. */
type Case = [name: string, run: () => Promise<{ estimateUs: number; timed: () => Promise<unknown> }>]
const batchCase = (name: string, n: number, jobs: boolean, entries: (ids: string[]) => Record<string, unknown>[]): Case => [
  name,
  async () => {
    const { projectId, ids } = await project(n, jobs)
    const mutations = entries(ids)
    return { estimateUs: batchCostUs(mutations as never), timed: () => mutate({ action: 'batch', projectId, mutations }) }
  },
]
const revertCase = (name: string, n: number, make: (ids: string[]) => Record<string, unknown>[][], kind: 'add' | 'update'): Case => [
  name,
  async () => {
    const { projectId, ids } = await project(n, false)
    const changeIds: string[] = []
    for (const mutations of make(ids))
      changeIds.push(...((await mutate({ action: 'batch', projectId, mutations }, 'change-ids')).changeIds ?? []))
    const row =
      kind === 'add'
        ? { target_kind: 'node', before: null, after: {}, fields: [] }
        : { target_kind: 'node', before: { data: {} }, after: {}, fields: ['label'] }
    return {
      estimateUs: revertCostUs(changeIds.map(() => row) as never),
      timed: () => mutate({ action: 'revert', projectId, changeIds }),
    }
  },
]
const goals = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `${tag} ${i}` } } }))

const CASES: Case[] = [
  batchCase('1,000 adds', 0, false, () => goals(1000, 'G')),
  batchCase('300 label updates', 300, false, (ids) => labels(ids, 'L')),
  batchCase('1,000 label updates', 1000, false, (ids) => labels(ids, 'L')),
  batchCase('150 deletes (leaves)', 150, false, (ids) => ids.map((id) => ({ action: 'delete', nodeId: id }))),
  batchCase('50 updates × blockedBy 50, 119 approaches with a job each', 119, true, (ids) => chain(ids, 50)),
  batchCase('69 updates × blockedBy 50, 119 approaches with a job each', 119, true, (ids) => chain(ids, 69)),
  batchCase('50 updates × blockedBy 50, 500 approaches with a job each', 500, true, (ids) => chain(ids, 50)),
  batchCase('449 updates × blockedBy 50, 500 approaches with a job each', 500, true, (ids) => chain(ids, 449)),
  revertCase('revert of 1,000 adds', 0, () => [goals(1000, 'R')], 'add'),
  revertCase('revert of 300 label updates', 300, (ids) => [labels(ids.slice(0, 150), 'R'), labels(ids.slice(150), 'R')], 'update'),
]

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const rows: string[] = []
try {
  await mutate({ action: 'addProject', project: { name: 'warm', id: 'warm' } }) // schemas compiled, statements prepared
  for (const [, run] of CASES.slice(0, 2)) await (await run()).timed()
  for (const [name, run] of CASES) {
    const ms: number[] = []
    const cpu: number[] = []
    let estimateUs = 0
    for (let r = 0; r < ROUNDS; r++) {
      const c = await run()
      estimateUs = c.estimateUs
      const used = process.cpuUsage()
      const t = performance.now()
      await c.timed()
      ms.push(performance.now() - t)
      const spent = process.cpuUsage(used)
      cpu.push((spent.user + spent.system) / 1000)
    }
    const m = median(ms)
    const c = median(cpu)
    const row = `| ${name} | ${(estimateUs / 1000).toFixed(0)} | ${m.toFixed(0)} (${ms.map((x) => x.toFixed(0)).join(', ')}) | ${c.toFixed(0)} | ${(c / (estimateUs / 1000)).toFixed(2)} | ${estimateUs <= 150_000 ? 'accepted' : '413'} |`
    console.log(row)
    rows.push(row)
  }
} finally {
  await server.close()
}
console.log("\nPGlite, one process, the limit lifted: the request's time against its estimate (ms)\n")
console.log('| request | estimate | wall: median (each run) | CPU, median | CPU ÷ estimate | at the default 150 ms |')
console.log('|---|---|---|---|---|---|')
for (const r of rows) console.log(r)
