/**
 * The CPU time of issue 50's heaviest batches (item 3), in one process with the server in it, so
 * PGlite's work counts: a machine shared with other work changes their wall time several fold,
 * their CPU time far less. Beside `npm run bench:stall` (the other tenants' latencies).
 *
 *   bun bench/stall-cpu.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/stall-cpu.ts   (this process's share only)
 */
import { startBenchServer } from './lib/app'

const server = await startBenchServer(process.env.BENCH_DATABASE_URL)
const mutate = async (body: unknown) => {
  const res = await fetch(`${server.url}/api/v1/mutate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const answer = (await res.json()) as { success?: boolean }
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(answer).slice(0, 300)}`)
  return answer
}

/** A batch of `updates` entries, each setting blockedBy to the next 50 of `n` approaches with a job each. */
async function chain(n: number, updates: number) {
  const projectId = `chain-${n}-${updates}`
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
      mutations.push({ action: 'add', node: { type: 'job', parentId: `draft-a${i}`, data: { label: `J${from + i}` } } })
    }
    await mutate({ action: 'batch', projectId, mutations })
  }
  const ids = Array.from({ length: n }, (_, i) => `approach-${i + 1}`)
  const mutations = Array.from({ length: updates }, (_, i) => ({
    action: 'update',
    nodeId: ids[i],
    data: { blockedBy: ids.slice(i + 1, i + 51) },
  }))
  const cpu = process.cpuUsage()
  const t = performance.now()
  await mutate({ action: 'batch', projectId, mutations })
  const used = process.cpuUsage(cpu)
  return { cpuMs: Math.round((used.user + used.system) / 1000), wallMs: Math.round(performance.now() - t) }
}

try {
  await chain(4, 3) // warm-up: schemas compiled, statements prepared
  for (const [n, updates] of [
    [119, 69],
    [500, 449],
  ] as const)
    console.log(
      JSON.stringify({ batch: `${updates} updates × blockedBy 50, ${n} approaches with a job each`, ...(await chain(n, updates)) }),
    )
} finally {
  await server.close()
}
