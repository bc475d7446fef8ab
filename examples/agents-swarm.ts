/**
 * A swarm of agents working one plan through ready work, claims and held GET /events.
 *
 *   bun examples/agents-swarm.ts                                   # one server on PGlite
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun examples/agents-swarm.ts --replicas 2
 *   ARBOR_API_URL=http://localhost:3000/api/v1 ARBOR_API_KEY=arb_… bun examples/agents-swarm.ts   # a running server
 *
 * It starts the server(s) itself (a fresh PGlite DATA_DIR, or a fresh database on the PostgreSQL
 * server of DATABASE_URL, dropped afterwards; rate limit off, since five agents on one address
 * pass 100 requests a minute), seeds a project of 200 jobs: 4 chains of 5 approaches with 10
 * jobs each, every approach blockedBy the one before it in its chain. Then 5 agent processes
 * (`--agent`, separate bun processes, spread over the replicas) each loop: claim count:1; work
 * 50–300 ms; mark it done with the claim's token; when nothing is ready, wait on
 * GET /events?wait=30 for the next change. It prints jobs done, duplicate executions (must be
 * 0), claims lost, and for each completed blocker the time from the write that completed it
 * (the done answer whose `_meta.unblocked` lists jobs) to the first claim of one of those jobs
 * (p50, p99). Times are the agents' clocks: one machine.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

type Json = Record<string, any>
const AGENTS = 5
const CHAINS = 4
const LINKS = 5
const JOBS = 10

const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? process.argv[i + 1] : undefined
}

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json()) as Json }
}

// ---- one agent (a process of its own) ----

async function agent(name: string, base: string, key: string, projectId: string) {
  const log = (line: Json) => console.log(JSON.stringify({ agent: name, at: Date.now(), ...line }))
  let cursor = ''
  for (;;) {
    const claimed = await call(base, key, 'POST', '/mutate', { action: 'claim', projectId, agent: name, count: 1 })
    const claim = claimed.body.claims?.[0]
    if (claim) {
      log({ type: 'claimed', job: claim.nodeId })
      await Bun.sleep(50 + Math.random() * 250) // the work
      const done = await call(base, key, 'POST', '/mutate', {
        action: 'update',
        projectId,
        nodeId: claim.nodeId,
        claimToken: claim.claimToken,
        data: { status: 'done' },
      })
      if (done.status === 409 && done.body.error === 'claim_lost') log({ type: 'lost', job: claim.nodeId })
      else if (done.status !== 200) throw new Error(`done ${claim.nodeId}: ${done.status} ${JSON.stringify(done.body)}`)
      else log({ type: 'done', job: claim.nodeId, unblocked: done.body._meta?.unblocked ?? [] })
      continue
    }
    const ready = await call(base, key, 'GET', `/ready?projectId=${projectId}&limit=1`)
    const { total, claimed: held, blocked } = ready.body._meta
    if (total + held + blocked === 0) return log({ type: 'finished' })
    // nothing to claim: sleep in the server's waiter list until something changes
    const events = await call(base, key, 'GET', `/events?projectId=${projectId}&after=${cursor}&limit=500&wait=30`)
    cursor = events.body.nextCursor ?? cursor
  }
}

// ---- the orchestrator ----

async function startServers(replicas: number) {
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
    async stop() {
      for (const p of procs) p.proc.kill('SIGTERM')
      await Promise.all(procs.map((p) => p.proc.exited))
      await drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

async function seed(base: string, key: string): Promise<string> {
  const projectId = `swarm-${Date.now().toString(36)}`
  await call(base, key, 'POST', '/mutate', { action: 'addProject', project: { name: 'Swarm', id: projectId } })
  const mutations: Json[] = [{ action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Ship the swarm' } } }]
  mutations.push({ action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Work in parallel' } } })
  for (let c = 0; c < CHAINS; c++)
    for (let l = 0; l < LINKS; l++) {
      const id = `draft-a${c}-${l}`
      const blockedBy = l ? [`draft-a${c}-${l - 1}`] : undefined
      mutations.push({
        action: 'add',
        node: { id, type: 'approach', parentId: 'draft-n', data: { label: `Step ${l} of chain ${c}`, blockedBy } },
      })
      for (let j = 0; j < JOBS; j++)
        mutations.push({ action: 'add', node: { type: 'job', parentId: id, data: { label: `Job ${j} of step ${l}, chain ${c}` } } })
    }
  const res = await call(base, key, 'POST', '/mutate', { action: 'batch', projectId, mutations })
  if (res.status !== 200) throw new Error(`seed: ${res.status} ${JSON.stringify(res.body)}`)
  return projectId
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN
}

async function orchestrate() {
  const replicas = Number(option('replicas') ?? 1)
  const external = process.env.ARBOR_API_URL && process.env.ARBOR_API_KEY
  const servers = external
    ? { urls: [process.env.ARBOR_API_URL!], key: process.env.ARBOR_API_KEY!, stop: async () => {} }
    : await startServers(replicas)
  try {
    const projectId = await seed(servers.urls[0]!, servers.key)
    const started = Date.now()
    const lines: Json[] = []
    const agents = Array.from({ length: AGENTS }, (_, i) => {
      const url = servers.urls[i % servers.urls.length]!
      const proc = Bun.spawn([process.execPath, import.meta.path, '--agent', `agent-${i}`, '--url', url, '--project', projectId], {
        env: { ...process.env, ARBOR_API_KEY: servers.key },
        stdout: 'pipe',
        stderr: 'inherit',
      })
      return (async () => {
        for (const line of (await new Response(proc.stdout).text()).split('\n')) if (line.trim()) lines.push(JSON.parse(line))
        if ((await proc.exited) !== 0) throw new Error(`agent-${i} failed`)
      })()
    })
    await Promise.all(agents)
    const seconds = (Date.now() - started) / 1000
    const claimedBy = new Map<string, number>()
    const firstClaim = new Map<string, number>()
    for (const l of lines)
      if (l.type === 'claimed') {
        claimedBy.set(l.job, (claimedBy.get(l.job) ?? 0) + 1)
        if (!firstClaim.has(l.job)) firstClaim.set(l.job, l.at)
      }
    // per completed blocker: from the write that unblocked jobs to the first claim of one of them
    const latencies = lines
      .filter((l) => l.type === 'done' && l.unblocked.length)
      .map((l) => Math.min(...l.unblocked.map((id: string) => firstClaim.get(id) ?? Infinity)) - l.at)
    const done = lines.filter((l) => l.type === 'done').length
    const figures = {
      database: external ? 'external' : process.env.DATABASE_URL ? 'postgres' : 'pglite',
      replicas: servers.urls.length,
      agents: AGENTS,
      jobs: CHAINS * LINKS * JOBS,
      jobsDone: done,
      duplicateExecutions: [...claimedBy.values()].reduce((n, c) => n + c - 1, 0),
      claimsLost: lines.filter((l) => l.type === 'lost').length,
      blockersCompleted: latencies.length,
      unblockToFirstClaimMs: { p50: pct(latencies, 50), p99: pct(latencies, 99) },
      seconds: Math.round(seconds * 10) / 10,
    }
    console.log(JSON.stringify(figures, null, 2))
    if (figures.duplicateExecutions !== 0 || done !== figures.jobs) process.exitCode = 1
  } finally {
    await servers.stop()
  }
}

if (process.argv.includes('--agent')) await agent(option('agent')!, option('url')!, process.env.ARBOR_API_KEY!, option('project')!)
else await orchestrate()
