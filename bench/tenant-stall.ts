/**
 * One tenant's heavy request and every other tenant's latency meanwhile (issue 50, item 3). For
 * each case, one request within the limits runs while four other tenants (users of their own,
 * each in a project of its own) loop on `add` + `GET /nodes`; the table gives the heavy request's
 * time, the server's CPU time meanwhile (on PGlite about how long it held the database; of a split
 * sequence, its costliest batch's), and the others' p50, p99 and worst latency over the requests
 * they started while it ran.
 * The goal: the others' p99 at most 250 ms whatever the one request.
 *
 *   bun run bench:stall [--cases free119,team500,ready2000,revert,import15k]
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun run bench:stall
 *
 * PGlite under a temporary DATA_DIR by default; with BENCH_DATABASE_URL a database created on
 * that server (dropped after). The cases (the probe's of issue 50):
 *   free119    a free user's batch of 69 updates, each setting blockedBy to the next 50 of 119 approaches (each with a job)
 *   team500    a team user's batch of 449 updates, each setting blockedBy to the next 50 of 500 approaches (each with a job)
 *   ready2000  GET /ready?limit=100 on 2,000 approaches (each with a job) × 50 blockers each
 *   revert     a revert (dry run, then for real) of a 1,000-node batch in a 10,000-node project
 *   import15k  POST /import-okf of a 15,000-task bundle
 * On PGlite a batch or revert over the cost limit of one write (PGLITE_WRITE_BUDGET_MS,
 * src/mutate/cost-limit.ts) is refused with 413: the batch cases then send the same entries split as
 * the 413's _tip says, one batch after the other, and give the others' latencies over all of them.
 * Search uses the fallback embedder (EMBEDDINGS_MODEL_DIR points nowhere), and each case starts
 * once the server is quiet (setup's indexing done), so the figures are the request's own.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ownDatabase, quiet, serverEnv } from './lib/harness'
import { freePort, spawnServer } from './lib/spawn'

const { values } = parseArgs({ options: { cases: { type: 'string' } } })
const CASES = (values.cases ?? 'free119,team500,ready2000,revert,import15k').split(',')
const pgUrl = process.env.BENCH_DATABASE_URL
const kind = pgUrl ? 'postgres' : 'pglite'
const ADMIN = `stall-${crypto.randomUUID()}`
const OTHERS = 4

const tmp = mkdtempSync(join(tmpdir(), 'arbor-stall-'))
const db = await ownDatabase(kind, tmp, pgUrl)
const server = await spawnServer(
  serverEnv({
    ...db.env,
    PORT: String(freePort()),
    LOG_LEVEL: 'warn',
    ADMIN_TOKEN: ADMIN,
    EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model'),
    MAX_BODY_BYTES: String(64 * 1024 * 1024),
  }) as Record<string, string>,
  120_000,
)

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any; ms: number; start: number }>
const client =
  (key: string): Call =>
  async (method, path, body) => {
    const t = performance.now()
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    const ms = performance.now() - t
    let parsed: any = text
    try {
      parsed = JSON.parse(text)
    } catch {}
    return { status: res.status, body: parsed, ms, start: t }
  }
const must = async (p: Promise<{ status: number; body: any; ms: number }>, what: string) => {
  const r = await p
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`)
  return r
}
const adminCall = client(ADMIN)
async function user(name: string, tier: string): Promise<Call> {
  const r = await adminCall('POST', '/admin/v1/users', { name, tier })
  if (r.status !== 201) throw new Error(`user ${name}: ${r.status} ${JSON.stringify(r.body)}`)
  return client(r.body.apiKey)
}
const mutate = (call: Call, body: unknown, what: string) => must(call('POST', '/api/v1/mutate', body), what)
const addProject = async (call: Call, id: string) => mutate(call, { action: 'addProject', project: { name: id, id } }, `project ${id}`)

/** Approaches under one need, each with a job when `jobs`: the batches that add them (at most 1,000 entries each). */
async function approaches(call: Call, projectId: string, n: number, jobs: boolean) {
  await mutate(
    call,
    {
      action: 'batch',
      projectId,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
      ],
    },
    'goal',
  )
  const per = jobs ? 500 : 1000
  for (let from = 0; from < n; from += per) {
    const count = Math.min(per, n - from)
    const mutations: unknown[] = []
    for (let i = 0; i < count; i++) {
      mutations.push({
        action: 'add',
        node: { id: `draft-a${i}`, type: 'approach', parentId: 'need-1', data: { label: `Approach ${from + i}` } },
      })
      if (jobs) mutations.push({ action: 'add', node: { type: 'job', parentId: `draft-a${i}`, data: { label: `Job ${from + i}` } } })
    }
    await mutate(call, { action: 'batch', projectId, mutations }, 'approaches')
  }
  return Array.from({ length: n }, (_, i) => `approach-${i + 1}`)
}
/** Each of the first `count` approaches blocked by the next 50, as batch entries. */
const chain = (ids: string[], count: number) =>
  Array.from({ length: count }, (_, i) => ({ action: 'update', nodeId: ids[i], data: { blockedBy: ids.slice(i + 1, i + 51) } }))

// ---- the other tenants ----
const others: { call: Call; project: string }[] = []
for (let i = 0; i < OTHERS; i++) {
  const call = await user(`other${i}`, 'team')
  const project = `other-${i}`
  await addProject(call, project)
  await mutate(call, { action: 'add', projectId: project, node: { type: 'task', data: { label: 'first' } } }, 'other task')
  others.push({ call, project })
}

// a warm-up of every path the cases take (schemas compiled, statements prepared): the figures are a running server's
{
  const call = await user('warm', 'team')
  await addProject(call, 'warm')
  const ids = await approaches(call, 'warm', 4, true)
  await mutate(call, { action: 'batch', projectId: 'warm', mutations: chain(ids, 3) }, 'warm chain')
  await must(call('GET', '/api/v1/ready?projectId=warm&limit=100'), 'warm ready')
  await mutate(call, { action: 'revert', projectId: 'warm', filter: { agent: 'nobody' }, dryRun: true }, 'warm revert')
  const files = {
    'index.md': '---\nokf_version: 0.1\ntype: Index\ntitle: Warm\n---\n',
    'tasks/task-1.md': '---\ntype: Task\ntitle: T\nid: task-1\n---\n\n# T\n',
  }
  await must(call('POST', '/api/v1/import-okf', { files }), 'warm import')
}

/**
 * The server process's CPU time so far (ms, /proc; 10 ms ticks). On PGlite the database runs in
 * that process, so the CPU time a request takes is about how long it holds the database, and it
 * varies far less than wall time on a machine shared with other work. PostgreSQL's own is not in it.
 */
function serverCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/${server.proc.pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! : 0

/** `heavy` while the others loop; their latencies of requests started while it ran. */
async function underLoad(heavy: () => Promise<{ status: number; ms: number; body: any; cpuMs?: number }>) {
  await quiet(server.proc.pid, 'before the case')
  let running = true
  const samples: { start: number; ms: number }[] = []
  const loops = others.map(async ({ call, project }, i) => {
    let n = 0
    // a request counts when it started while the heavy one ran, however late it ends
    while (running) {
      const add = await call('POST', '/api/v1/mutate', {
        action: 'add',
        projectId: project,
        node: { type: 'task', data: { label: `t${i}-${n++}` } },
      })
      if (add.status !== 200) throw new Error(`other add: ${add.status} ${JSON.stringify(add.body).slice(0, 200)}`)
      samples.push(add)
      if (!running) break
      const read = await call('GET', `/api/v1/nodes?projectId=${project}`)
      if (read.status !== 200) throw new Error(`other read: ${read.status}`)
      samples.push(read)
    }
  })
  await Bun.sleep(300) // the others under way first
  const from = performance.now()
  const cpuFrom = serverCpuMs()
  const result = await heavy()
  const cpuMs = result.cpuMs ?? serverCpuMs() - cpuFrom
  const to = performance.now()
  running = false
  await Promise.all(loops)
  const during = samples
    .filter((s) => s.start >= from && s.start < to)
    .map((s) => s.ms)
    .sort((a, b) => a - b)
  return {
    status: result.status,
    ms: Math.round(result.ms),
    serverCpuMs: Math.round(cpuMs),
    others: during.length,
    p50: Math.round(percentile(during, 0.5)),
    p99: Math.round(percentile(during, 0.99)),
    max: Math.round(during.at(-1) ?? 0),
    answer: result.status === 200 ? undefined : JSON.stringify(result.body),
  }
}

const rows: Record<string, unknown>[] = []
const report = (name: string, r: Awaited<ReturnType<typeof underLoad>>) => {
  const row = { case: name, ...r, answer: r.answer?.slice(0, 160) }
  rows.push(row)
  console.log(JSON.stringify(row))
}

/**
 * One batch under load; when PGlite's cost limit refuses it (413, src/mutate/cost-limit.ts), the
 * same entries again as its `_tip` says, in batches of `perRequestMax`, one after the other: the
 * others' latencies over the whole sequence.
 */
async function batchCase(call: Call, projectId: string, name: string, mutations: unknown[]) {
  const whole = await underLoad(() => call('POST', '/api/v1/mutate', { action: 'batch', projectId, mutations }))
  report(name, whole)
  if (whole.status !== 413) return
  const per = JSON.parse(whole.answer ?? '{}').perRequestMax ?? 0
  if (!(per > 0)) throw new Error(`413 without perRequestMax: ${whole.answer}`)
  const parts = Math.ceil(mutations.length / per)
  report(
    `${name.split(':')[0]}: the same, split as the 413's _tip says (${parts} batches of at most ${per})`,
    await underLoad(async () => {
      const t = performance.now()
      let last = { status: 200, body: {} as any }
      let cpuMs = 0 // the costliest batch's: how long one of them held the server
      for (let from = 0; from < mutations.length && last.status === 200; from += per) {
        const cpu = serverCpuMs()
        last = await call('POST', '/api/v1/mutate', { action: 'batch', projectId, mutations: mutations.slice(from, from + per) })
        cpuMs = Math.max(cpuMs, serverCpuMs() - cpu)
      }
      return { status: last.status, ms: performance.now() - t, body: last.body, cpuMs }
    }),
  )
}

try {
  if (CASES.includes('free119')) {
    const call = await user('free', 'free')
    await addProject(call, 'free119')
    const ids = await approaches(call, 'free119', 119, true)
    const mutations = chain(ids, 69)
    await batchCase(call, 'free119', 'free119: batch of 69 updates × blockedBy 50 (119 approaches)', mutations)
  }
  if (CASES.includes('team500')) {
    const call = await user('team', 'team')
    await addProject(call, 'team500')
    const ids = await approaches(call, 'team500', 500, true)
    const mutations = chain(ids, 449)
    await batchCase(call, 'team500', 'team500: batch of 449 updates × blockedBy 50 (500 approaches)', mutations)
  }
  if (CASES.includes('ready2000')) {
    const call = await user('ready', 'team')
    await addProject(call, 'ready2000')
    const ids = await approaches(call, 'ready2000', 2000, true)
    const updates = chain(ids, 2000)
    // in batches of 50: within PGlite's cost limit of one write (src/mutate/cost-limit.ts)
    for (let i = 0; i < updates.length; i += 50)
      await mutate(call, { action: 'batch', projectId: 'ready2000', mutations: updates.slice(i, i + 50) }, 'blockers')
    report(
      'ready2000: GET /ready?limit=100, 2,000 approaches × 50 blockers',
      await underLoad(() => call('GET', '/api/v1/ready?projectId=ready2000&limit=100')),
    )
  }
  if (CASES.includes('revert')) {
    const call = await user('revert', 'team')
    await addProject(call, 'revert10k')
    await mutate(
      call,
      { action: 'batch', projectId: 'revert10k', mutations: [{ action: 'add', node: { type: 'goal', data: { label: 'G' } } }] },
      'goal',
    )
    for (let b = 0; b < 9; b++)
      await mutate(
        call,
        {
          action: 'batch',
          projectId: 'revert10k',
          mutations: Array.from({ length: 1000 }, (_, i) => ({
            action: 'add',
            node: { type: 'need', parentId: 'goal-1', data: { label: `N${b}-${i}` } },
          })),
        },
        'nodes',
      )
    await Bun.sleep(5)
    const since = new Date().toISOString()
    await Bun.sleep(5)
    await mutate(
      call,
      {
        action: 'batch',
        projectId: 'revert10k',
        mutations: Array.from({ length: 1000 }, (_, i) => ({
          action: 'add',
          node: { type: 'need', parentId: 'goal-1', data: { label: `Last ${i}` } },
        })),
      },
      'last batch',
    )
    const body = { action: 'revert', projectId: 'revert10k', filter: { since } }
    report(
      'revert: dry run of a 1,000-node batch, 10,000 nodes',
      await underLoad(() => call('POST', '/api/v1/mutate', { ...body, dryRun: true })),
    )
    report('revert: a 1,000-node batch, 10,000 nodes', await underLoad(() => call('POST', '/api/v1/mutate', body)))
  }
  if (CASES.includes('import15k')) {
    const call = await user('import', 'team')
    const files: Record<string, string> = { 'index.md': '---\nokf_version: 0.1\ntype: Index\ntitle: Import 15k\n---\n\n# Import 15k\n' }
    for (let i = 1; i <= 15_000; i++)
      files[`tasks/task-${i}.md`] = `---\ntype: Task\ntitle: Task ${i}\nid: task-${i}\n---\n\n# Task ${i}\n\nSome words about task ${i}.\n`
    report('import15k: POST /import-okf of 15,000 tasks', await underLoad(() => call('POST', '/api/v1/import-okf', { files })))
  }
} finally {
  server.proc.kill('SIGTERM')
  await server.proc.exited
  await db.drop()
  rmSync(tmp, { recursive: true, force: true })
}

console.log(`\n${kind}: other tenants' latency (ms) while one request runs (${OTHERS} tenants looping add + GET /nodes)\n`)
console.log("| case | status | request ms | server CPU ms | others' requests | p50 | p99 | max |")
console.log('|---|---|---|---|---|---|---|---|')
for (const r of rows) console.log(`| ${r.case} | ${r.status} | ${r.ms} | ${r.serverCpuMs} | ${r.others} | ${r.p50} | ${r.p99} | ${r.max} |`)
