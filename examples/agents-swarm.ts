/**
 * A swarm of agents working one plan through ready work, claims and held GET /events.
 *
 *   bun examples/agents-swarm.ts                                   # one server on PGlite
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun examples/agents-swarm.ts --replicas 2
 *   ARBOR_API_URL=http://localhost:3000/api/v1 ARBOR_API_KEY=arb_… bun examples/agents-swarm.ts   # a running server
 *   bun examples/agents-swarm.ts --scale-out --faults --agents 1,5,20 --jobs 2000   # npm run bench:swarm
 *
 * Without --scale-out it starts the server(s) itself (a fresh PGlite DATA_DIR, or a fresh database
 * on the PostgreSQL server of DATABASE_URL, dropped afterwards; rate limit off, since the agents
 * share one address). With --scale-out it starts examples/scale-out/stack.ts instead: PostgreSQL,
 * Meilisearch, three replicas and HAProxy, and every agent talks to HAProxy.
 *
 * The plan: 4 chains of 5 approaches, every approach blockedBy the one before it in its chain,
 * --jobs jobs (default 200) spread over the 20 approaches. Each agent (`--agent`, a bun process
 * of its own) loops: claim count:1; work --work ms (default 50–300, random); mark it done with the
 * claim's token; when nothing is ready, wait on GET /events?wait=30 for the next change. Every
 * write carries an Idempotency-Key; a request that fails in transport (a replica killed, HAProxy's
 * 502/503/504, our 503 while the database restarts) is sent again with the same key, after
 * Retry-After when the answer has one.
 *
 * --agents 1,5,20 runs the swarm once per size (a new project each) and reports jobs per second
 * for each. --faults, in the run of the largest size: kills one agent process with SIGKILL at 20%
 * (its claim must be freed by its lease, --lease seconds, default 30 with --scale-out), kills
 * replica 2 with -9 at 30% and starts it again, and restarts PostgreSQL at 60% (--scale-out only).
 *
 * It prints, per run: jobs done, duplicate executions (must be 0), acknowledged writes lost (every
 * done write answered 200 must show as done in GET /nodes, and in the history when the server has
 * one), the claims of killed agents and when another agent took their items, every error an agent
 * saw (status, error code, whether it said Retry-After), jobs/s, and for each completed blocker the
 * time from the write that completed it (the done answer whose `_meta.unblocked` lists jobs) to
 * the first claim of one of those jobs (p50, p99). Exits 1 when a check fails.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

type Json = Record<string, any>
const CHAINS = 4
const LINKS = 5

const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const flag = (name: string) => process.argv.includes(`--${name}`)

interface Answer {
  status: number
  body: Json
  retryAfter: string | null
}

async function once(base: string, key: string, method: string, path: string, body?: unknown, idem?: string): Promise<Answer> {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(idem ? { 'idempotency-key': idem } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(90_000),
  })
  const text = await res.text()
  let parsed: Json
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = { notJson: text.slice(0, 200) } // HAProxy's own 502/503 pages are HTML
  }
  return { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') }
}

/**
 * One call, sent again while the failure is one of transport (a connection refused or cut, a
 * 502/503/504): writes with the same Idempotency-Key, so a write that committed before its
 * answer was lost is answered from its record instead of running twice. `seen` hears each failure.
 */
async function call(base: string, key: string, method: string, path: string, body?: unknown, seen?: (e: Json) => void): Promise<Answer> {
  const idem = method === 'POST' ? crypto.randomUUID() : undefined
  const deadline = Date.now() + 120_000
  for (let attempt = 0; ; attempt++) {
    let answer: Answer | undefined
    let failure: Json
    try {
      answer = await once(base, key, method, path, body, idem)
      // 502/503/504, or a 409 that says when to come back (the same key still running elsewhere)
      if (![502, 503, 504].includes(answer.status) && !(answer.status === 409 && answer.retryAfter)) return answer
      failure = { status: answer.status, error: answer.body.error ?? answer.body.errors?.[0] ?? 'html', retryAfter: answer.retryAfter }
    } catch (err) {
      failure = { status: 0, error: (err as Error).name === 'TimeoutError' ? 'timeout' : 'connection', retryAfter: null }
    }
    seen?.({ ...failure, path: path.split('?')[0], method })
    if (Date.now() > deadline) throw new Error(`${method} ${path}: still failing after 2 minutes: ${JSON.stringify(failure)}`)
    const wait = failure.retryAfter ? Number(failure.retryAfter) * 1000 : Math.min(2000, 100 * 2 ** attempt)
    await Bun.sleep(wait)
  }
}

// ---- one agent (a process of its own) ----

async function agent(name: string, base: string, key: string, projectId: string, lease: number, work: [number, number]) {
  const log = (line: Json) => console.log(JSON.stringify({ agent: name, at: Date.now(), ...line }))
  const seen = (e: Json) => log({ type: 'error', ...e })
  let cursor = ''
  for (;;) {
    const claimed = await call(
      base,
      key,
      'POST',
      '/mutate',
      { action: 'claim', projectId, agent: name, count: 1, leaseSeconds: lease },
      seen,
    )
    if (claimed.status !== 200) throw new Error(`claim: ${claimed.status} ${JSON.stringify(claimed.body)}`)
    const claim = claimed.body.claims?.[0]
    if (claim) {
      log({ type: 'claimed', job: claim.nodeId })
      await Bun.sleep(work[0] + Math.random() * (work[1] - work[0])) // the work
      const done = await call(
        base,
        key,
        'POST',
        '/mutate',
        { action: 'update', projectId, nodeId: claim.nodeId, claimToken: claim.claimToken, data: { status: 'done' } },
        seen,
      )
      if (done.status === 409 && done.body.error === 'claim_lost') log({ type: 'lost', job: claim.nodeId })
      else if (done.status !== 200) throw new Error(`done ${claim.nodeId}: ${done.status} ${JSON.stringify(done.body)}`)
      else log({ type: 'done', job: claim.nodeId, unblocked: done.body._meta?.unblocked ?? [] })
      continue
    }
    const ready = await call(base, key, 'GET', `/ready?projectId=${projectId}&limit=1`, undefined, seen)
    const { total, claimed: held, blocked } = ready.body._meta
    if (total + held + blocked === 0) return log({ type: 'finished' })
    // nothing to claim: sleep in the server's waiter list until something changes
    const events = await call(base, key, 'GET', `/events?projectId=${projectId}&after=${cursor}&limit=500&wait=30`, undefined, seen)
    cursor = events.body.nextCursor ?? cursor
  }
}

// ---- the servers ----

interface Servers {
  urls: string[]
  key: string
  database: string
  stop: () => Promise<void>
  killReplica?: (i: number) => Promise<void>
  startReplica?: (i: number) => Promise<void>
  restartPostgres?: () => Promise<void>
}

async function startServers(replicas: number): Promise<Servers> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-swarm-'))
  let databaseUrl: string | undefined
  let drop = async () => {}
  if (process.env.DATABASE_URL) {
    const { default: postgres } = await import('postgres')
    const name = `arbor_swarm_${process.pid}`
    const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} })
    await admin.unsafe(`create database ${name}`)
    await admin.end()
    const url = new URL(process.env.DATABASE_URL)
    url.pathname = `/${name}`
    databaseUrl = url.toString()
    drop = async () => {
      const a = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists ${name} with (force)`)
      await a.end()
    }
  } else if (replicas > 1) throw new Error('two replicas need PostgreSQL: set DATABASE_URL')
  const procs: { proc: ReturnType<typeof Bun.spawn>; url: string }[] = []
  let key = ''
  for (let i = 0; i < replicas; i++) {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'info', // the "listening" line carries the port
      DATA_DIR: join(dataDir, String(i)),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    }
    const proc = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: join(import.meta.dir, '..'), env, stdout: 'pipe', stderr: 'inherit' })
    const reader = proc.stdout.getReader()
    let out = ''
    let url = ''
    while (!url) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`server ${i} exited:\n${out}`)
      out += new TextDecoder().decode(value)
      key ||= /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(out)?.[1] ?? ''
      url = /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/.exec(out)?.[1] ?? ''
    }
    void (async () => {
      while (!(await reader.read()).done) {} // keep the pipe drained
    })()
    procs.push({ proc, url: `${url}/api/v1` })
  }
  return {
    urls: procs.map((p) => p.url),
    key,
    database: databaseUrl ? 'postgres' : 'pglite',
    async stop() {
      for (const p of procs) p.proc.kill('SIGTERM')
      await Promise.all(procs.map((p) => p.proc.exited))
      await drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function startScaleOut(): Promise<Servers> {
  const { startStack } = await import('./scale-out/stack')
  const dir = mkdtempSync(join(tmpdir(), 'arbor-scale-out-'))
  const basePort = Number(option('base-port') ?? 20_000 + Math.floor(Math.random() * 20_000))
  const stack = await startStack({ dir, basePort, replicaEnv: { RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' } })
  if (!stack.ownerKey) throw new Error('the first replica printed no owner key')
  return {
    urls: [stack.apiUrl],
    key: stack.ownerKey,
    database: 'postgres, 3 replicas behind HAProxy',
    killReplica: stack.killReplica,
    startReplica: stack.startReplica,
    restartPostgres: stack.restartPostgres,
    async stop() {
      await stack.stop()
      if (process.exitCode) console.error(`the stack's data and logs are kept in ${dir}`)
      else rmSync(dir, { recursive: true, force: true })
    },
  }
}

// ---- the plan ----

async function seed(base: string, key: string, jobs: number): Promise<string> {
  const projectId = `swarm-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`
  const add = await call(base, key, 'POST', '/mutate', { action: 'addProject', project: { name: 'Swarm', id: projectId } })
  if (add.status !== 200) throw new Error(`addProject: ${add.status} ${JSON.stringify(add.body)}`)
  const head: Json[] = [{ action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Ship the swarm' } } }]
  head.push({ action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Work in parallel' } } })
  for (let c = 0; c < CHAINS; c++)
    for (let l = 0; l < LINKS; l++)
      head.push({
        action: 'add',
        node: {
          id: `draft-a${c}-${l}`,
          type: 'approach',
          parentId: 'draft-n',
          data: { label: `Step ${l} of chain ${c}`, ...(l ? { blockedBy: [`draft-a${c}-${l - 1}`] } : {}) },
        },
      })
  const first = await call(base, key, 'POST', '/mutate', { action: 'batch', projectId, mutations: head })
  if (first.status !== 200) throw new Error(`seed: ${first.status} ${JSON.stringify(first.body)}`)
  const idMap = first.body.idMap as Record<string, string>
  const entries: Json[] = []
  for (let j = 0; j < jobs; j++) {
    const c = j % CHAINS
    const l = Math.floor(j / CHAINS) % LINKS
    entries.push({
      action: 'add',
      node: { type: 'job', parentId: idMap[`draft-a${c}-${l}`], data: { label: `Job ${j}, step ${l} of chain ${c}` } },
    })
  }
  for (let at = 0; at < entries.length; at += 1000) {
    const res = await call(base, key, 'POST', '/mutate', { action: 'batch', projectId, mutations: entries.slice(at, at + 1000) })
    if (res.status !== 200) throw new Error(`seed jobs: ${res.status} ${JSON.stringify(res.body)}`)
  }
  return projectId
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN
}

async function run(servers: Servers, agents: number, jobs: number, faults: boolean, lease: number, work: [number, number]) {
  const base = servers.urls[0]!
  const projectId = await seed(base, servers.key, jobs)
  const started = Date.now()
  const lines: Json[] = []
  const done = () => lines.filter((l) => l.type === 'done').length
  const killed = new Map<string, number>() // agent → when
  const faultLog: Json[] = []
  const procs = Array.from({ length: agents }, (_, i) => {
    const url = servers.urls[i % servers.urls.length]!
    const name = `agent-${i}`
    const proc = Bun.spawn(
      [
        process.execPath,
        import.meta.path,
        '--agent',
        name,
        '--url',
        url,
        '--project',
        projectId,
        '--lease',
        String(lease),
        '--work',
        `${work[0]}-${work[1]}`,
      ],
      { env: { ...process.env, ARBOR_API_KEY: servers.key }, stdout: 'pipe', stderr: 'inherit' },
    )
    const finished = (async () => {
      let rest = ''
      for await (const chunk of proc.stdout) {
        rest += new TextDecoder().decode(chunk)
        const parts = rest.split('\n')
        rest = parts.pop()!
        for (const line of parts) if (line.trim()) lines.push(JSON.parse(line))
      }
      const code = await proc.exited
      if (code !== 0 && !killed.has(name)) throw new Error(`${name} exited ${code}`)
    })()
    return { name, proc, finished }
  })

  // the faults, each once, as the work passes its mark
  const faulting = (async () => {
    if (!faults) return
    const at = async (share: number) => {
      while (done() < jobs * share) await Bun.sleep(20)
    }
    await at(0.2)
    const victim = procs[procs.length - 1]!
    victim.proc.kill('SIGKILL')
    killed.set(victim.name, Date.now())
    faultLog.push({ fault: `agent ${victim.name} killed (SIGKILL)`, at: Date.now() - started, done: done() })
    if (servers.killReplica && servers.startReplica) {
      await at(0.3)
      await servers.killReplica(1)
      faultLog.push({ fault: 'replica 2 killed (-9)', at: Date.now() - started, done: done() })
      await Bun.sleep(1000)
      await servers.startReplica(1)
      faultLog.push({ fault: 'replica 2 started again', at: Date.now() - started, done: done() })
    }
    if (servers.restartPostgres) {
      await at(0.6)
      faultLog.push({ fault: 'PostgreSQL restarting (pg_ctl restart -m fast)', at: Date.now() - started, done: done() })
      await servers.restartPostgres()
      faultLog.push({ fault: 'PostgreSQL restarted', at: Date.now() - started, done: done() })
    }
  })()
  try {
    await Promise.all(procs.map((p) => p.finished))
    await faulting
  } catch (err) {
    for (const p of procs) p.proc.kill('SIGKILL') // one agent failed: the run is over
    throw err
  }
  const seconds = (Date.now() - started) / 1000

  // ---- what happened ----
  const executions = new Map<string, string[]>()
  const firstClaim = new Map<string, number>()
  for (const l of lines)
    if (l.type === 'claimed') {
      executions.set(l.job, [...(executions.get(l.job) ?? []), l.agent])
      if (!firstClaim.has(l.job)) firstClaim.set(l.job, l.at)
    }
  const doneBy = new Map<string, string[]>()
  for (const l of lines) if (l.type === 'done') doneBy.set(l.job, [...(doneBy.get(l.job) ?? []), l.agent])
  // a killed agent's unfinished item is done again by another once its lease frees it: not a
  // duplicate; nor is an execution whose done write was refused (claim_lost: its lease ran out, say
  // while the database restarted, and another agent took the item): its work never landed
  const unfinished = (job: string, agent: string) => killed.has(agent) && !(doneBy.get(job) ?? []).includes(agent)
  const refused = new Set(lines.filter((l) => l.type === 'lost').map((l) => `${l.job} ${l.agent}`))
  const duplicates = [...executions].reduce(
    (n, [job, by]) => n + Math.max(0, by.filter((a) => !unfinished(job, a) && !refused.has(`${job} ${a}`)).length - 1),
    0,
  )
  const twiceDone = [...doneBy.values()].filter((by) => by.length > 1).length
  // acknowledged writes against the database's own answer
  const acknowledged = [...doneBy.keys()]
  const nodes = (await call(base, servers.key, 'GET', `/nodes?projectId=${projectId}&type=job`)).body.nodes as Json[]
  const status = new Map(nodes.map((n) => [n.id, n.data.status]))
  const doneInDb = nodes.filter((n) => n.data.status === 'done').length
  const orphaned = [...executions].flatMap(([job, by]) =>
    by.flatMap((a) => {
      if (!unfinished(job, a)) return []
      const kill = killed.get(a)!
      const next = lines.find((l) => l.type === 'claimed' && l.job === job && l.agent !== a && l.at > kill)
      // no one took it again and it is done: the killed agent's own done write landed, unanswered
      const landed = !next && status.get(job) === 'done'
      return [{ job, agent: a, retakenAfterKillS: next ? Math.round((next.at - kill) / 100) / 10 : null, landedBeforeTheKill: landed }]
    }),
  )
  const lost = acknowledged.filter((id) => status.get(id) !== 'done')
  const history = await call(base, servers.key, 'GET', `/history?projectId=${projectId}&limit=1`)
  const historyChecked = history.status === 200
  let lostInHistory: string[] = []
  if (historyChecked)
    for (const id of acknowledged) {
      const h = await call(base, servers.key, 'GET', `/history?projectId=${projectId}&nodeId=${id}`)
      if (!JSON.stringify(h.body).includes('"done"')) lostInHistory.push(id)
    }
  if (!historyChecked) lostInHistory = []
  const errors = lines.filter((l) => l.type === 'error')
  const errorKinds = new Map<string, number>()
  for (const e of errors) {
    const k = `${e.status} ${e.error}${e.retryAfter ? ` Retry-After:${e.retryAfter}` : ''}`
    errorKinds.set(k, (errorKinds.get(k) ?? 0) + 1)
  }
  // an error is clear when it is a transport failure or says what it is; ours must say Retry-After
  const unclear = errors.filter((e) => e.status === 503 && e.error !== 'html' && !e.retryAfter)
  const latencies = lines
    .filter((l) => l.type === 'done' && l.unblocked.length)
    .map((l) => Math.min(...l.unblocked.map((id: string) => firstClaim.get(id) ?? Infinity)) - l.at)
    .filter((ms) => Number.isFinite(ms))
  const figures = {
    database: servers.database,
    agents,
    jobs,
    jobsDone: doneInDb,
    jobsDoneAcknowledged: acknowledged.length,
    seconds: Math.round(seconds * 10) / 10,
    jobsPerSecond: Math.round((acknowledged.length / seconds) * 10) / 10,
    duplicateExecutions: duplicates,
    jobsDoneTwice: twiceDone,
    acknowledgedWritesLost: lost.length,
    history: historyChecked ? { lost: lostInHistory.length } : 'no history endpoint on this server: skipped',
    // executions whose done write was refused because their lease had run out (their work discarded)
    claimsLost: lines.filter((l) => l.type === 'lost').length,
    killedAgentsClaims: orphaned,
    faults: faultLog,
    errorsSeen: Object.fromEntries(errorKinds),
    unclearErrors: unclear.length,
    unblockToFirstClaimMs: { blockers: latencies.length, p50: pct(latencies, 50), p99: pct(latencies, 99) },
  }
  const ok =
    duplicates === 0 &&
    twiceDone === 0 &&
    lost.length === 0 &&
    lostInHistory.length === 0 &&
    doneInDb === jobs &&
    unclear.length === 0 &&
    orphaned.every((o) => o.retakenAfterKillS !== null || o.landedBeforeTheKill)
  return { figures, ok }
}

async function orchestrate() {
  const sizes = (option('agents') ?? '5').split(',').map(Number)
  const jobs = Number(option('jobs') ?? 200)
  const scaleOut = flag('scale-out')
  const faults = flag('faults')
  const lease = Number(option('lease') ?? (scaleOut || faults ? 30 : 900))
  const [lo, hi] = (option('work') ?? '50-300').split('-').map(Number) as [number, number]
  const external = process.env.ARBOR_API_URL && process.env.ARBOR_API_KEY
  const servers: Servers = external
    ? { urls: [process.env.ARBOR_API_URL!], key: process.env.ARBOR_API_KEY!, database: 'external', stop: async () => {} }
    : scaleOut
      ? await startScaleOut()
      : await startServers(Number(option('replicas') ?? 1))
  const results: Json[] = []
  let ok = true
  try {
    const largest = Math.max(...sizes)
    for (const n of sizes) {
      const r = await run(servers, n, jobs, faults && n === largest, lease, [lo, hi])
      console.log(JSON.stringify(r.figures, null, 2))
      results.push(r.figures)
      ok &&= r.ok
    }
  } catch (err) {
    process.exitCode = 1
    throw err
  } finally {
    if (!ok) process.exitCode = 1
    await servers.stop()
  }
  if (results.length > 1) {
    const one = results[0]!.jobsPerSecond as number
    console.log(
      JSON.stringify({
        scaling: results.map((r) => ({
          agents: r.agents,
          jobsPerSecond: r.jobsPerSecond,
          ratioToFirst: Math.round((r.jobsPerSecond / one) * 10) / 10,
        })),
      }),
    )
  }
  console.log(JSON.stringify({ summary: ok ? 'ok' : 'FAILED' }))
  if (!ok) process.exitCode = 1
}

if (flag('agent')) {
  const [lo, hi] = (option('work') ?? '50-300').split('-').map(Number) as [number, number]
  await agent(option('agent')!, option('url')!, process.env.ARBOR_API_KEY!, option('project')!, Number(option('lease') ?? 900), [lo, hi])
} else await orchestrate()
