/**
 * bun run bench:history — what history costs (history.md, 7), on PGlite and, with
 * BENCH_DATABASE_URL, on PostgreSQL, each in one run:
 *   - a write (one `update` through POST /mutate) and a batch of 1,000 adds, with changes recorded
 *     and with recording off (`config.recordHistory`, the switch only this benchmark turns),
 *     alternating in rounds; ratio = median(on) ÷ median(off);
 *   - GET /history?nodeId p50 with 1,000,000 changes in the database (bulk-inserted with SQL);
 *   - a revert of 1,000 changes (the adds of one batch) through POST /mutate.
 * Reports figures, never asserts: these machines are shared and noisy.
 * On PGlite the database runs in this process, so its CPU time (process.cpuUsage) is reported
 * beside the wall clock: on a shared machine the wall clock swings with other processes' load.
 * ROUNDS (15), WRITES per round (50), CHANGES (1,000,000); BENCH_PARTS=writes,revert,history and
 * BENCH_DATABASES=pglite,postgres run a part.
 */
import { startBenchServer } from './lib/app'

const ROUNDS = Number(process.env.ROUNDS ?? 15)
const WRITES = Number(process.env.WRITES ?? 50)
const TOTAL_CHANGES = Number(process.env.CHANGES ?? 1_000_000)
const PARTS = new Set((process.env.BENCH_PARTS ?? 'writes,revert,history').split(','))
const DATABASES = new Set((process.env.BENCH_DATABASES ?? 'pglite,postgres').split(','))

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

async function run(label: string, postgresUrl?: string) {
  const server = await startBenchServer(postgresUrl)
  const headers = { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' }
  const call = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) => {
    const res = await fetch(server.url + path, { method, headers: { ...headers, ...extra }, body: body ? JSON.stringify(body) : undefined })
    const json = (await res.json()) as any
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }
  const config = server.deps.config
  try {
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Bench', id: 'bench' } })
    await call('POST', '/api/v1/mutate', { action: 'add', projectId: 'bench', node: { type: 'goal', data: { label: 'G' } } })
    // warm up both ways
    for (const on of [true, false]) {
      config.recordHistory = on
      for (let i = 0; i < 20; i++)
        await call('POST', '/api/v1/mutate', { action: 'update', projectId: 'bench', nodeId: 'goal-1', data: { label: `w${i}` } })
    }
    const write: Record<'on' | 'off', number[]> = { on: [], off: [] }
    const batch: Record<'on' | 'off', number[]> = { on: [], off: [] }
    const writeCpu: Record<'on' | 'off', number[]> = { on: [], off: [] }
    const batchCpu: Record<'on' | 'off', number[]> = { on: [], off: [] }
    const cpu = () => {
      const u = process.cpuUsage()
      return (u.user + u.system) / 1000
    }
    let project = 0
    for (let r = 0; r < (PARTS.has('writes') ? ROUNDS : 0); r++)
      for (const mode of (r % 2 ? ['off', 'on'] : ['on', 'off']) as ('on' | 'off')[]) {
        config.recordHistory = mode === 'on'
        const t0 = performance.now()
        const c0 = cpu()
        for (let i = 0; i < WRITES; i++)
          await call('POST', '/api/v1/mutate', {
            action: 'update',
            projectId: 'bench',
            nodeId: 'goal-1',
            data: { label: `${mode}${r}-${i}` },
          })
        write[mode].push((performance.now() - t0) / WRITES)
        writeCpu[mode].push((cpu() - c0) / WRITES)
        // each batch in a project of its own, so every round starts from the same size
        const id = `batch-${++project}`
        await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: id, id } })
        const mutations = Array.from({ length: 1000 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `g${i}` } } }))
        const t1 = performance.now()
        const c1 = cpu()
        await call('POST', '/api/v1/mutate', { action: 'batch', projectId: id, mutations })
        batch[mode].push(performance.now() - t1)
        batchCpu[mode].push(cpu() - c1)
      }
    config.recordHistory = true

    // a revert of 1,000 changes: the adds of one batch, by its requestId
    let revertMs = Number.NaN
    if (PARTS.has('revert')) {
      await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'revert', id: 'revert' } })
      const mutations = Array.from({ length: 1000 }, (_, i) => ({ action: 'add', node: { type: 'goal', data: { label: `r${i}` } } }))
      await call('POST', '/api/v1/mutate', { action: 'batch', projectId: 'revert', mutations }, { 'x-agent-id': 'bench-bot' })
      const requestId = (await call('GET', '/api/v1/history?projectId=revert&limit=1')).changes[0].requestId
      const t2 = performance.now()
      const reverted = await call('POST', '/api/v1/mutate', { action: 'revert', projectId: 'revert', filter: { requestId } })
      revertMs = performance.now() - t2
      if (reverted.reverted !== 1000) throw new Error(`reverted ${reverted.reverted}`)
    }

    // 1,000,000 changes: spread over 10,000 targets of the bench project, bulk-inserted
    const reads: number[] = []
    let loadS = 0
    let total = 0
    if (PARTS.has('history')) {
      const have = Number((await server.deps.db.query<{ n: string }>('select count(*)::text as n from changes'))[0]!.n)
      const t3 = performance.now()
      for (let done = have; done < TOTAL_CHANGES; ) {
        const n = Math.min(100_000, TOTAL_CHANGES - done)
        await server.deps.db.query(
          `insert into changes (project_id, user_id, user_name, key_id, via, request_id, action, target_kind, target_id, target_type, before, after, fields)
         select 'bench', null, 'bench', null, 'api', 'bulk-' || (i / 100), 'update', 'node', 'goal-' || (2 + i % 10000), 'goal',
           jsonb_build_object('parentId', null, 'data', jsonb_build_object('label', 'b' || i)),
           jsonb_build_object('parentId', null, 'data', jsonb_build_object('label', 'a' || i)), '["label"]'::jsonb
         from generate_series($1::int, $2::int) as i`,
          [done, done + n - 1],
        )
        done += n
      }
      await server.deps.db.query('analyze changes')
      loadS = (performance.now() - t3) / 1000
      total = Number((await server.deps.db.query<{ n: string }>('select count(*)::text as n from changes'))[0]!.n)
      for (let i = 0; i < 300; i++) {
        const node = `goal-${2 + ((i * 37) % 10000)}`
        const t = performance.now()
        const page = await call('GET', `/api/v1/history?projectId=bench&nodeId=${node}`)
        reads.push(performance.now() - t)
        if (page.changes.length === 0) throw new Error(`${node}: ${page.changes.length} changes`)
      }
    }
    const firstUnder = reads.length ? reads.slice(100) : [Number.NaN] // after a warm-up of 100
    return {
      label,
      writeOn: median(write.on),
      writeOff: median(write.off),
      batchOn: median(batch.on),
      batchOff: median(batch.off),
      writeCpuOn: median(writeCpu.on),
      writeCpuOff: median(writeCpu.off),
      batchCpuOn: median(batchCpu.on),
      batchCpuOff: median(batchCpu.off),
      revertMs,
      total,
      loadS,
      historyP50: median(firstUnder),
      historyP99: [...firstUnder].sort((a, b) => a - b)[Math.floor(firstUnder.length * 0.99)]!,
    }
  } finally {
    config.recordHistory = true
    await server.close()
  }
}

const results = DATABASES.has('pglite') ? [await run('PGlite')] : []
if (process.env.BENCH_DATABASE_URL && DATABASES.has('postgres')) results.push(await run('PostgreSQL', process.env.BENCH_DATABASE_URL))
const f = (ms: number) => `${ms.toFixed(2)} ms`
console.log(`\nhistory.md 7, ${ROUNDS} rounds of ${WRITES} writes and one 1,000-add batch per side (medians)\n`)
console.log('| figure | database | with changes | without | ratio | goal | met? |')
console.log('|---|---|---|---|---|---|---|')
for (const r of results) {
  const w = r.writeOn / r.writeOff
  const b = r.batchOn / r.batchOff
  console.log(
    `| write (update) p50 | ${r.label} | ${f(r.writeOn)} | ${f(r.writeOff)} | ${w.toFixed(3)}× | ≤ 1.15× | ${w <= 1.15 ? 'yes' : '**no**'} |`,
  )
  console.log(
    `| batch of 1,000 adds | ${r.label} | ${f(r.batchOn)} | ${f(r.batchOff)} | ${b.toFixed(3)}× | ≤ 1.25× | ${b <= 1.25 ? 'yes' : '**no**'} |`,
  )
  if (r.label === 'PGlite') {
    const wc = r.writeCpuOn / r.writeCpuOff
    const bc = r.batchCpuOn / r.batchCpuOff
    console.log(
      `| write (update), CPU time | PGlite | ${f(r.writeCpuOn)} | ${f(r.writeCpuOff)} | ${wc.toFixed(3)}× | ≤ 1.15× | ${wc <= 1.15 ? 'yes' : '**no**'} |`,
    )
    console.log(
      `| batch of 1,000 adds, CPU time | PGlite | ${f(r.batchCpuOn)} | ${f(r.batchCpuOff)} | ${bc.toFixed(3)}× | ≤ 1.25× | ${bc <= 1.25 ? 'yes' : '**no**'} |`,
    )
  }
  console.log(
    `| GET /history?nodeId p50 (p99), ${r.total.toLocaleString('en')} changes | ${r.label} | ${f(r.historyP50)} (${f(r.historyP99)}) | — | — | ≤ 10 ms | ${r.historyP50 <= 10 ? 'yes' : '**no**'} |`,
  )
  console.log(
    `| revert of 1,000 changes (adds) | ${r.label} | ${f(r.revertMs)} | — | — | ≤ 2,000 ms | ${r.revertMs <= 2000 ? 'yes' : '**no**'} |`,
  )
}
console.log(`\n(bulk insert of the changes: ${results.map((r) => `${r.label} ${r.loadS.toFixed(1)} s`).join(', ')})`)
