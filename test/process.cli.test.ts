import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDbAsIs } from '../src/db'
import { contents, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN } from './helpers'
import { startServer } from './process'

// docs/cli.md and docs/backup.md, through the real processes: `arbor …` as a user runs it, against
// a real server. The source server is PGlite; the restore goes into PostgreSQL with
// TEST_DATABASE_URL, else into a fresh embedded DATA_DIR.
const ROOT = join(import.meta.dir, '..')
const PG = !!process.env.TEST_DATABASE_URL
const work = mkdtempSync(join(tmpdir(), 'arbor-cli-'))
const server = await startServer({ DATABASE_URL: '' })
afterAll(async () => {
  await server.close()
  rmSync(work, { recursive: true, force: true })
})

async function arbor(args: string[], env: Record<string, string> = {}, cwd = work) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const admin = (args: string[]) => arbor([...args, '--url', server.url], { ADMIN_TOKEN })

// The cases of this describe run on PGlite whatever TEST_DATABASE_URL says (the server above has an
// empty DATABASE_URL, the commands reach it or its DATA_DIR, the broken doctor's PostgreSQL is a
// port where nothing answers): on CI's PostgreSQL pass they would do again exactly what this
// file's run on the PGlite pass did, so they run there alone. The restore below goes into
// PostgreSQL on that pass and stays on both.
describe.skipIf(PG)('arbor, the command', () => {
  it('prints its usage and version, and refuses an unknown command or flag with exit 2 and no data directory', async () => {
    const help = await arbor(['--help'])
    expect([help.code, help.stdout.split('\n')[0], help.stderr]).toEqual([0, 'Usage: arbor [command] [options]', ''])
    const version = await arbor(['--version'])
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    expect([version.code, version.stdout]).toEqual([0, `arbor ${pkg.version}\n`])
    for (const bad of [['--bogus'], ['frobnicate'], ['user', 'add'], ['user', 'list', '--nope'], ['serve', 'extra']]) {
      const res = await arbor(bad)
      expect([res.code, res.stdout, res.stderr.includes('Usage: arbor [command] [options]')]).toEqual([2, '', true])
    }
    expect(existsSync(join(work, 'data'))).toBe(false)
  })

  it('doctor: all good beside a healthy server, and names each problem of a broken setup', async () => {
    const port = new URL(server.url).port
    const healthy = await arbor(['doctor'], { DATA_DIR: server.env.DATA_DIR!, PORT: port, HOST: '127.0.0.1', ADMIN_TOKEN })
    expect([healthy.code, healthy.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, 'All good.'])
    expect(healthy.stdout).toContain(`ok    server     Arbor answers at http://127.0.0.1:${port} and its database is ready\n`)
    expect(healthy.stdout).toMatch(/^ok {4}database {3}the embedded database is held by the running server \(pid \d+\)/m)
    // how far the background embedding is, from the server's GET /metrics (its database is its alone)
    expect(healthy.stdout).toMatch(
      /^ok {4}search {5}(no project to embed yet \(embedder \S+\)|every project's nodes have vectors from \S+)$/m,
    )

    const other = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const broken = await arbor(['doctor'], {
        PORT: String(other.port),
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      })
      expect(broken.code).toBe(1)
      const fails = broken.stdout.split('\n').filter((l) => l.startsWith('FAIL'))
      expect(fails).toEqual([
        'FAIL  database   cannot open the PostgreSQL database: connect ECONNREFUSED 127.0.0.1:1',
        `FAIL  port       127.0.0.1:${other.port} is taken by another program`,
      ])
      expect(broken.stdout.trimEnd().split('\n').at(-1)).toBe('2 problems to fix.')
    } finally {
      other.stop(true)
    }
  })

  it('healthcheck: exit 0 while the server answers /healthz, 1 with one line when nothing does', async () => {
    const port = new URL(server.url).port
    const up = await arbor(['healthcheck'], { PORT: port })
    expect([up.code, up.stdout, up.stderr]).toEqual([0, '', ''])
    expect((await arbor(['healthcheck', '--url', server.url])).code).toBe(0)
    const other = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const closed = other.port
    other.stop(true)
    const down = await arbor(['healthcheck'], { PORT: String(closed) })
    expect([down.code, down.stdout]).toEqual([1, ''])
    expect(down.stderr).toStartWith(`arbor healthcheck: no answer from http://127.0.0.1:${closed}/healthz (`)
    expect((await arbor(['healthcheck', 'extra'])).code).toBe(2)
  })

  it('manages users and keys through the running server', async () => {
    const added = await admin(['user', 'add', 'Alice', '--tier', 'builder'])
    expect(added.code).toBe(0)
    const id = /^(usr_\S+)\s+Alice\s+tier=builder status=active$/m.exec(added.stdout)?.[1]
    const key = /^API key \(shown once\): (arb_\S+)$/m.exec(added.stdout)?.[1]
    expect([id, key]).toEqual([expect.any(String), expect.any(String)])
    expect((await server.call('GET', '/api/v1/projects', { key })).status).toBe(200)

    const list = await admin(['user', 'list', '--json'])
    expect(JSON.parse(list.stdout)).toContainEqual({
      id,
      name: 'Alice',
      tier: 'builder',
      status: 'active',
      lapsed: false,
      contributor: false,
    })
    const set = await admin(['user', 'set', id!, '--tier', 'free', '--lapsed', 'true'])
    expect([set.code, set.stdout]).toEqual([0, `${id}  Alice  tier=free status=active lapsed\n`])

    const created = await admin(['key', 'create', id!, '--label', 'ci'])
    const keyId = /^key (\S+)$/m.exec(created.stdout)?.[1]
    const second = /^API key \(shown once\): (arb_\S+)$/m.exec(created.stdout)?.[1]
    expect((await server.call('GET', '/api/v1/projects', { key: second })).status).toBe(200)
    const revoked = await admin(['key', 'revoke', keyId!])
    expect([revoked.code, revoked.stdout]).toEqual([0, `key ${keyId} revoked: it stops working at once\n`])
    expect((await server.call('GET', '/api/v1/projects', { key: second })).status).toBe(401)

    const unknown = await admin(['user', 'set', 'usr_nope', '--tier', 'team'])
    expect([unknown.code, unknown.stderr]).toEqual([1, 'arbor user: 404: User usr_nope not found\n'])
    const wrong = await arbor(['user', 'list', '--url', server.url], { ADMIN_TOKEN: 'x'.repeat(30) })
    expect([wrong.code, wrong.stderr]).toEqual([
      1,
      `arbor user: the server at ${server.url} refused the token (401): check ADMIN_TOKEN or the API key\n`,
    ])
  })

  it('export → import → export gives the same bundle (but for the project and the times)', async () => {
    const p = 'okf-src'
    expect(
      (await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'OKF: "source"', id: p } } })).status,
    ).toBe(200)
    const batch = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'addIteration', iteration: { name: 'S1' } },
          {
            action: 'add',
            node: { id: 'draft-g', type: 'goal', data: { label: 'Grow: "fast" #1', description: 'two\nlines', goalStatus: 'focus' } },
          },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need *bold*' } } },
          {
            action: 'add',
            node: {
              id: 'draft-n2',
              type: 'need',
              parentId: 'draft-g',
              data: { label: 'Other need', demand: [{ who: 'Ann (sales)', at: '2026-01-02', ask: 'soon: please' }] },
            },
          },
          {
            action: 'add',
            node: {
              id: 'draft-a',
              type: 'approach',
              parentId: 'draft-n',
              data: { label: 'Bet', notes: 'Some notes\n\nin two paragraphs', kano: 'must-have', serves: ['draft-n2'], measure: 'm' },
            },
          },
          {
            action: 'add',
            node: {
              id: 'draft-j',
              type: 'job',
              parentId: 'draft-a',
              data: {
                label: 'Job',
                iteration: 'S1',
                externalRefs: [{ system: 'github', key: 'org/repo#12', url: 'https://github.com/org/repo/issues/12' }],
              },
            },
          },
          {
            action: 'add',
            node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n2', data: { label: 'Bet two', blockedBy: ['draft-a'] } },
          },
          { action: 'add', node: { type: 'task', data: { label: 'A task', status: 'done' } } },
        ],
      },
    })
    expect([batch.status, batch.body.errors]).toEqual([200, undefined])
    const classified = (projectId: string) =>
      server.until(async () => {
        const res = await server.call('GET', `/api/v1/export-okf?projectId=${projectId}`)
        return Object.values(res.body.files as Record<string, string>).some((f) => /^kind: /m.test(f)) ? res : null
      })
    const first = await classified(p)
    writeFileSync(join(work, 'bundle.json'), JSON.stringify(first.body))
    const imported = await arbor(['import', join(work, 'bundle.json'), '--key', server.ownerKey, '--url', server.url])
    expect([imported.code, imported.stderr]).toEqual([0, ''])
    const target = /into project (\S+) /.exec(imported.stdout)?.[1]
    const second = await classified(target!) // a task's kind comes from the classifier, a moment after the import
    const normal = (bundle: { files: Record<string, string> }, id: string) =>
      Object.fromEntries(
        Object.entries(bundle.files).map(([path, text]) => [
          path,
          text.replace(/^timestamp: .*$/m, 'timestamp: T').replace(`project: ${id}`, 'project: P'),
        ]),
      )
    expect(second.body.file_count).toBe(first.body.file_count)
    expect(normal(second.body, target!)).toEqual(normal(first.body, p))
  })
})

describe('arbor backup and restore under write load', () => {
  it('restores every project, node, iteration, changelog entry, webhook, share link, key and idempotency record', async () => {
    const p = 'keep'
    const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      const res = await server.call(method, path, { body, headers })
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`)
      return res.body
    }
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Keep', id: p } })
    await call('POST', '/api/v1/mutate', { action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
    const goal = (await call('POST', '/api/v1/mutate', { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } })).node
    await call('POST', '/api/v1/mutate', { action: 'add', projectId: p, node: { type: 'need', parentId: goal.id, data: { label: 'N' } } })
    const gone = (await call('POST', '/api/v1/mutate', { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Gone' } } }))
      .node
    await call('POST', '/api/v1/mutate', { action: 'delete', projectId: p, nodeId: gone.id })
    await call('POST', '/api/v1/webhooks', { projectId: p, url: 'https://hooks.invalid/x' }).catch(() => null)
    await call('POST', '/api/v1/share', { projectId: p })
    await call(
      'POST',
      '/api/v1/mutate',
      { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Once' } } },
      { 'idempotency-key': 'k-1' },
    )
    await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Load', id: 'load' } })

    // writes go on while the backup is taken
    let writing = true
    let written = 0
    const load = (async () => {
      while (writing)
        await call('POST', '/api/v1/mutate', { action: 'add', projectId: 'load', node: { type: 'goal', data: { label: `L${++written}` } } })
    })()
    await server.until(async () => written >= 5, 30_000, 'load started')
    const file = join(work, 'arbor.ndjson')
    const backup = await admin(['backup', file])
    writing = false
    await load
    expect([backup.code, backup.stderr]).toEqual([0, `arbor: backup of the running server at ${server.url} written to ${file}\n`])
    await server.stop()

    const pg = PG ? await emptyPostgres() : null
    const target: Record<string, string> = pg ? { DATABASE_URL: pg.url } : { DATA_DIR: join(work, 'restored') }
    try {
      const restored = await arbor(['restore', file], target)
      expect([restored.code, /^arbor: restored \d+ rows of \d+ tables into /.test(restored.stderr)]).toEqual([0, true])
      const again = await arbor(['restore', file], target)
      expect([again.code, /^arbor restore: the target database is not empty \(table \w+ has rows\)/.test(again.stderr)]).toEqual([1, true])

      const source = await openDbAsIs({ dataDir: server.env.DATA_DIR! })
      const copy = await openDbAsIs({ dataDir: join(work, 'restored'), databaseUrl: pg?.url })
      try {
        // counters that every request moves are left out; the rows of the loaded project are checked apart
        const skip = /^(credits_used|last_used.*)$/
        const [a, b] = [await contents(source, skip), await contents(copy, skip)]
        const kept = (rows: string[]) => rows.filter((r) => !r.includes('"project_id":"load"') && !r.includes('"id":"load"'))
        for (const table of [
          'users',
          'api_keys',
          'projects',
          'nodes',
          'iterations',
          'changelog',
          'webhooks',
          'share_tokens',
          'idempotency_keys',
        ])
          expect([table, kept(b[table]!)]).toEqual([table, kept(a[table]!)])
        expect(b.webhooks!.length + b.share_tokens!.length + b.idempotency_keys!.length + b.changelog!.length).toBeGreaterThanOrEqual(3)
        // the load: a prefix L1…Lj of the writes, each with its creation event, nothing half-written
        const labels = (await copy.query<{ l: string }>(`select data->>'label' as l from nodes where project_id = 'load'`)).map((r) => r.l)
        const j = labels.length
        expect(j).toBeGreaterThanOrEqual(5)
        expect(labels.sort()).toEqual(Array.from({ length: j }, (_, i) => `L${i + 1}`).sort())
        const [events] = await copy.query<{ n: number }>(
          `select count(*)::int as n from events where project_id = 'load' and type = 'node.added'`,
        )
        expect(Number(events!.n)).toBe(j)
      } finally {
        await source.close()
        await copy.close()
      }

      // the restored database serves: the owner's key works, and the idempotent request replays
      const restoredServer = await startServer({ ...target, DATABASE_URL: pg?.url ?? '' }, { ...server, env: target } as never)
      try {
        const nodes = await restoredServer.call('GET', `/api/v1/nodes?projectId=${p}`)
        expect(nodes.status).toBe(200)
        const replay = await restoredServer.call('POST', '/api/v1/mutate', {
          body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Once' } } },
          headers: { 'idempotency-key': 'k-1' },
        })
        expect(replay.headers.get('idempotency-replayed') ?? replay.body.node?.id).toBeTruthy()
      } finally {
        await restoredServer.stop()
      }
    } finally {
      await pg?.drop()
    }
  })
})
