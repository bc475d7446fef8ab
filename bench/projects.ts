// Many projects on one PostgreSQL (issue 45, item 5): 5,000 projects of 20 nodes across 200 users,
// three replicas of the real server on one database, and what each costs:
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun run bench:projects [--projects 5000] [--users 200]
//     [--model] [--quiet-minutes 15]
//
// --model: the replicas embed with the sentence model in models/ (as a default install does);
// without it, with the smaller USE-lite + GloVe model. --quiet-minutes: how long to wait for the
// replicas to finish indexing after the seed before giving up.
//
// A database of our own is created on that server and dropped at the end. Users are made through
// the admin API, projects and their nodes through POST /mutate (a project, then one batch of 20
// nodes), 16 at a time spread over the replicas. Once the replicas are quiet (their search indexes
// built), it measures: each replica's RSS; GET /api/v1/projects p50/p99 (every user once per
// replica, round robin, after an untimed round that fills each replica's cache); one keyword
// search in every project (p50/p99). Prints one JSON line and
// writes bench/results/projects.json (gitignored).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ownDatabase, quiet } from './lib/harness'
import { rssMb } from './lib/rss'
import { freePort, spawnServer } from './lib/spawn'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const num = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? Number(args[i + 1]) : fallback
}
const PROJECTS = num('projects', 5000)
const QUIET_MINUTES = num('quiet-minutes', 15)
const MODEL = args.includes('--model')
const USERS = num('users', 200)
const PG_URL = process.env.BENCH_DATABASE_URL
if (!PG_URL) throw new Error('BENCH_DATABASE_URL must name a PostgreSQL server on which we may create a database')
const ROOT = join(import.meta.dir, '..')
const ADMIN = 'bench-admin-token-0123456789abcdef'
const WORDS = ['billing', 'login', 'search', 'export', 'invoice', 'upload', 'report', 'onboarding', 'dashboard', 'alerts']

const tmp = mkdtempSync(join(tmpdir(), 'arbor-bench-projects-'))
const db = await ownDatabase('postgres', tmp, PG_URL)
const servers: Awaited<ReturnType<typeof spawnServer>>[] = []
const stats = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b)
  return { n: s.length, p50: Number(percentile(s, 50).toFixed(2)), p99: Number(percentile(s, 99).toFixed(2)) }
}
try {
  for (let i = 0; i < 3; i++)
    servers.push(
      await spawnServer({
        PORT: String(freePort()),
        DATABASE_URL: db.env.DATABASE_URL!,
        DATA_DIR: join(tmp, `replica-${i}`),
        ADMIN_TOKEN: ADMIN,
        RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'warn',
        ...(MODEL ? {} : { EMBEDDINGS_MODEL_DIR: join(tmp, 'no-model') }),
      }),
    )
  const at = (k: number) => servers[k % servers.length]!.url
  const send = async (k: number, method: string, path: string, auth: string, body?: unknown) => {
    const res = await fetch(at(k) + path, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const json = (await res.json()) as Record<string, unknown>
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }
  const rssStart = servers.map((s) => Math.round(rssMb(s.proc.pid)))

  // ---- the users and their projects ----
  const t0 = performance.now()
  const keys: string[] = []
  for (let u = 0; u < USERS; u++) {
    const made = await send(u, 'POST', '/admin/v1/users', ADMIN, { name: `user ${u}`, tier: 'team' })
    keys.push(made.apiKey as string)
  }
  const projects: { id: string; key: string; word: string }[] = []
  for (let p = 0; p < PROJECTS; p++) projects.push({ id: `proj-${p}`, key: keys[p % USERS]!, word: WORDS[p % WORDS.length]! })
  let next = 0
  const worker = async (w: number) => {
    for (let p = next++; p < projects.length; p = next++) {
      const { id, key, word } = projects[p]!
      await send(p + w, 'POST', '/api/v1/mutate', key, { action: 'addProject', project: { id, name: `Project ${p}` } })
      const mutations = [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: `Grow ${word} for project ${p}` } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: `People need ${word} to work` } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: `Rebuild ${word}` } } },
        ...Array.from({ length: 10 }, (_, j) => ({
          action: 'add',
          node: { type: 'job', parentId: 'draft-a', data: { label: `Step ${j} of the ${word} rebuild` } },
        })),
        ...Array.from({ length: 7 }, (_, j) => ({
          action: 'add',
          node: { type: 'task', data: { label: `Check the ${word} notes ${j}` } },
        })),
      ]
      await send(p + w, 'POST', '/api/v1/mutate', key, { action: 'batch', projectId: id, mutations })
    }
  }
  await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)))
  const seedS = (performance.now() - t0) / 1000
  const t1 = performance.now()
  for (const s of servers) await quiet(s.proc.pid, 'search indexing after the seed', QUIET_MINUTES)
  const indexedS = (performance.now() - t1) / 1000

  // ---- the reads ----
  const timed = async (k: number, path: string, key: string) => {
    const s = performance.now()
    await send(k, 'GET', path, key)
    return performance.now() - s
  }
  // once per user and replica untimed (each replica's first answer for a user loads its list),
  // then three timed rounds
  for (let round = 0; round < 3; round++) for (let u = 0; u < USERS; u++) await timed(u + round, '/api/v1/projects', keys[u]!)
  const list: number[] = []
  for (let round = 0; round < 3; round++) for (let u = 0; u < USERS; u++) list.push(await timed(u + round, '/api/v1/projects', keys[u]!))
  const search: number[] = []
  for (let p = 0; p < projects.length; p++) {
    const { id, key, word } = projects[p]!
    search.push(await timed(p, `/api/v1/search?projectId=${id}&q=${word}&mode=keyword&limit=5`, key))
  }
  const out = {
    db: 'postgres',
    replicas: servers.length,
    projects: PROJECTS,
    users: USERS,
    nodes: PROJECTS * 20,
    embedder: MODEL ? 'all-MiniLM-L6-v2' : 'USE-lite + GloVe',
    seedS: Number(seedS.toFixed(1)),
    indexedAfterSeedS: Number(indexedS.toFixed(1)),
    rssMb: { start: rssStart, afterSeed: servers.map((s) => Math.round(rssMb(s.proc.pid))) },
    projectsList: stats(list),
    searchInEach: stats(search),
  }
  console.log(JSON.stringify(out))
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
  writeFileSync(join(ROOT, 'bench/results/projects.json'), JSON.stringify(out, null, 2))
} finally {
  for (const s of servers) s.proc.kill('SIGTERM')
  await Promise.all(servers.map((s) => s.proc.exited))
  await db.drop()
  rmSync(tmp, { recursive: true, force: true })
}
