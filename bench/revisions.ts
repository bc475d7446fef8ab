/**
 * bun bench/revisions.ts — what ifRev costs (live.md, 7: a write with ifRev at most 10% more
 * time than the same write without it), on PGlite and, with BENCH_DATABASE_URL, on PostgreSQL,
 * each in one run: WRITES `update`s of one node through POST /mutate with ifRev (the rev of the
 * previous answer, so every write lands) and as many without, alternating in ROUNDS rounds;
 * ratio = median(with) ÷ median(without). Also a batch of 100 updates (each entry with its
 * ifRev, or none). On PGlite the database runs in this process, so its CPU time is reported
 * beside the wall clock. Reports figures, never asserts: these machines are shared and noisy.
 * ROUNDS (15), WRITES (50); BENCH_DATABASES=pglite,postgres runs a part.
 */
import { startBenchServer } from './lib/app'

const ROUNDS = Number(process.env.ROUNDS ?? 15)
const WRITES = Number(process.env.WRITES ?? 50)
const DATABASES = new Set((process.env.BENCH_DATABASES ?? 'pglite,postgres').split(','))
const BATCH = 100

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

type Mode = 'with' | 'without'

async function run(label: string, postgresUrl?: string) {
  const server = await startBenchServer(postgresUrl)
  const headers = { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' }
  const call = async (body: unknown) => {
    const res = await fetch(`${server.url}/api/v1/mutate`, { method: 'POST', headers, body: JSON.stringify(body) })
    const json = (await res.json()) as any
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }
  try {
    await call({ action: 'addProject', project: { name: 'Bench', id: 'bench' } })
    const goals = await call({
      action: 'batch',
      projectId: 'bench',
      mutations: Array.from({ length: BATCH }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `g${i}` } } })),
    })
    const revs = new Map<string, string>(goals.results.map((r: any) => [r.nodeId, r.node.rev]))
    const ids = [...revs.keys()]
    const update = async (mode: Mode, id: string, label: string) => {
      const answer = await call({
        action: 'update',
        projectId: 'bench',
        nodeId: id,
        data: { label },
        ...(mode === 'with' ? { ifRev: revs.get(id) } : {}),
      })
      revs.set(id, answer.node.rev)
    }
    const batch = async (mode: Mode, tag: string) => {
      const answer = await call({
        action: 'batch',
        projectId: 'bench',
        mutations: ids.map((id) => ({
          action: 'update',
          nodeId: id,
          data: { label: tag },
          ...(mode === 'with' ? { ifRev: revs.get(id) } : {}),
        })),
      })
      for (const r of answer.results) revs.set(r.nodeId, r.node.rev)
    }
    for (const mode of ['with', 'without'] as Mode[]) for (let i = 0; i < 20; i++) await update(mode, ids[0]!, `warm-${mode}-${i}`)
    const write: Record<Mode, number[]> = { with: [], without: [] }
    const writeCpu: Record<Mode, number[]> = { with: [], without: [] }
    const batches: Record<Mode, number[]> = { with: [], without: [] }
    for (let r = 0; r < ROUNDS; r++)
      for (const mode of (r % 2 ? ['without', 'with'] : ['with', 'without']) as Mode[]) {
        const t0 = performance.now()
        const c0 = cpu()
        for (let i = 0; i < WRITES; i++) await update(mode, ids[0]!, `${mode}${r}-${i}`)
        write[mode].push((performance.now() - t0) / WRITES)
        writeCpu[mode].push((cpu() - c0) / WRITES)
        const t1 = performance.now()
        await batch(mode, `${mode}${r}`)
        batches[mode].push(performance.now() - t1)
      }
    return {
      label,
      with: median(write.with),
      without: median(write.without),
      cpuWith: median(writeCpu.with),
      cpuWithout: median(writeCpu.without),
      batchWith: median(batches.with),
      batchWithout: median(batches.without),
    }
  } finally {
    await server.close()
  }
}

const results = []
if (DATABASES.has('pglite')) results.push(await run('PGlite'))
if (DATABASES.has('postgres') && process.env.BENCH_DATABASE_URL) results.push(await run('PostgreSQL', process.env.BENCH_DATABASE_URL))
console.log(`ifRev: ${ROUNDS} rounds of ${WRITES} updates of one node each way, and a batch of ${BATCH} updates per round`)
console.log('| database | write with ifRev | without | ratio | batch of 100 with | without | ratio | CPU/write with | without |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const r of results)
  console.log(
    `| ${r.label} | ${r.with.toFixed(2)} ms | ${r.without.toFixed(2)} ms | ${(r.with / r.without).toFixed(3)} | ${r.batchWith.toFixed(1)} ms | ${r.batchWithout.toFixed(1)} ms | ${(r.batchWith / r.batchWithout).toFixed(3)} | ${r.cpuWith.toFixed(2)} ms | ${r.cpuWithout.toFixed(2)} ms |`,
  )
