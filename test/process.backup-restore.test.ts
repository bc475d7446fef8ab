import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDbAsIs } from '../src/db'
import { contents, emptyPostgres } from './backup-db'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

// Issue 46, items 1 and 3, through the real processes: a server that stored hostile strings is
// backed up (`arbor backup`) and restored (`arbor restore`) with identical rows, between PGlite
// and PostgreSQL both ways when TEST_DATABASE_URL is set; a backup into a missing directory fails at once.
const ROOT = join(import.meta.dir, '..')
const PG = !!process.env.TEST_DATABASE_URL
const work = mkdtempSync(join(tmpdir(), 'arbor-backup-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** `arbor …` as a user runs it; killed (and failed) past `deadlineMs`. */
export async function arbor(args: string[], env: Record<string, string> = {}, deadlineMs = 120_000) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const timer = setTimeout(() => proc.kill('SIGKILL'), deadlineMs)
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  clearTimeout(timer)
  return { stdout, stderr, code: proc.signalCode ? proc.signalCode : code }
}

/** Strings that break line readers, JSON writers and normalisers: the line and paragraph separators first. */
export const HOSTILE = [
  'line\u2028separator',
  'para\u2029graph',
  'next\u0085line',
  'all three \u2028\u2029\u0085 together',
  'crlf\r\nand\rcr',
  'quote " backslash \\ slash / tab \t',
  'emoji 🚀 family 👨‍👩‍👧 flag 🇫🇷',
  'combining e\u0301 and \u0301 alone',
  'rtl \u202eevil\u202c and bom \ufeff',
  'astral 𝔸𝕓 and noncharacters \uffff \ufffe',
  'nul-like \u0001\u001f and del \u007f c1 \u0080\u009f',
  'cjk 漢字 かな 한글',
  '{"json":"inside"}\n---\nyaml: [in, text]',
]

/** The hardening string cases (test/hardening.strings.test.ts) and the hostile strings, written through the API. */
async function hostileWrites(server: ServerProcess) {
  const ok = async (body: unknown) => {
    const res = await server.call('POST', '/api/v1/mutate', { body })
    expect([res.status, res.body.errors]).toEqual([200, undefined])
    return res.body
  }
  const p = 'hostile'
  await ok({ action: 'addProject', project: { name: `P ${HOSTILE[0]}`, id: p } })
  await ok({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: `Sprint ${HOSTILE[1]}` } },
      ...HOSTILE.map((label, i) => ({
        action: 'add',
        node: {
          id: `draft-g${i}`,
          type: 'goal',
          data: { label, description: HOSTILE[(i + 1) % HOSTILE.length] },
        },
      })),
      {
        action: 'add',
        node: {
          id: 'draft-n',
          type: 'need',
          parentId: 'draft-g0',
          data: { label: 'need', demand: [{ who: HOSTILE[2], at: '2026-01-02', ask: HOSTILE[0] }] },
        },
      },
      {
        action: 'add',
        node: { type: 'approach', parentId: 'draft-n', data: { label: HOSTILE[6], notes: HOSTILE.join('\n') } },
      },
      {
        action: 'add',
        node: {
          type: 'task',
          data: { label: HOSTILE[3], externalRefs: [{ system: 'gh', key: HOSTILE[1], url: 'https://example.com/a' }] },
        },
      },
    ],
  })
  await ok({ action: 'renameProject', projectId: p, name: `Renamed ${HOSTILE[2]}` })
  await ok({ action: 'update', projectId: p, nodeId: 'goal-1', data: { label: `${HOSTILE[4]} ${HOSTILE[0]}` } })
  // the hardening cases: lone surrogates are refused (400), an emoji is kept
  for (const bad of ['a\ud800', 'x\udfff y', 'P\udbff'])
    expect(
      (await server.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: bad } } } }))
        .status,
    ).toBe(400)
  await ok({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Ship it \ud83d\ude80' } } })
  const feedback = await server.call('POST', '/api/v1/feedback', {
    body: { kind: 'note', summary: `hi ${HOSTILE[0]}`, details: HOSTILE.join(' '), context: { [HOSTILE[1]!]: HOSTILE[2], list: HOSTILE } },
  })
  expect(feedback.status).toBeLessThan(300)
  const keyed = await server.call('POST', '/api/v1/mutate', {
    body: { idempotencyKey: `k ${HOSTILE[1]}`, action: 'add', projectId: p, node: { type: 'goal', data: { label: HOSTILE[5] } } },
  })
  expect(keyed.status).toBe(200)
  const user = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: `user ${HOSTILE[0]}` } })
  expect(user.status).toBeLessThan(300)
}

const dbOf = (env: Record<string, string>) => openDbAsIs({ dataDir: env.DATA_DIR ?? '', databaseUrl: env.DATABASE_URL || undefined })

async function compare(a: Record<string, string>, b: Record<string, string>) {
  const [x, y] = [await dbOf(a), await dbOf(b)]
  try {
    const [left, right] = [await contents(x), await contents(y)]
    expect(Object.values(right).flat().length).toBeGreaterThan(20)
    expect(right).toEqual(left)
  } finally {
    await x.close()
    await y.close()
  }
}

/** A fresh, empty target: a new DATA_DIR, or a new database on TEST_DATABASE_URL's server. */
async function target(kind: 'pglite' | 'postgres'): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    const dir = mkdtempSync(join(work, 'target-'))
    return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const pg = await emptyPostgres()
  return { env: { DATABASE_URL: pg.url, DATA_DIR: join(work, 'unused') }, drop: pg.drop }
}

describe('a server that stored hostile strings backs up and restores with identical rows', () => {
  // this run's own database, and on PostgreSQL an embedded source too: every direction between the two
  const sources: ('pglite' | 'postgres')[] = PG ? ['postgres', 'pglite'] : ['pglite']
  for (const from of sources)
    it(`from ${from}`, async () => {
      const server = await startServer(from === 'pglite' ? { DATABASE_URL: '' } : {})
      try {
        await hostileWrites(server)
        // through the running server (its admin API) …
        const viaServer = join(work, `${from}-server.ndjson`)
        const b1 = await arbor(['backup', viaServer, '--url', server.url], { ADMIN_TOKEN })
        expect([b1.code, b1.stderr]).toEqual([0, `arbor: backup of the running server at ${server.url} written to ${viaServer}\n`])
        await server.stop()
        // … and from the stopped database, which nothing writes to any more: the copy must equal it
        const direct = join(work, `${from}-direct.ndjson`)
        // (an embedded source in a PostgreSQL run: its DATA_DIR, not the unused database beside it)
        const source = from === 'pglite' ? { DATA_DIR: server.env.DATA_DIR! } : server.env
        const b2 = await arbor(['backup', direct], source)
        expect([b2.code, b2.stderr]).toEqual([
          0,
          `arbor: backup of ${from === 'pglite' ? `DATA_DIR ${server.env.DATA_DIR}` : 'the PostgreSQL database of DATABASE_URL'} written to ${direct}\n`,
        ])
        for (const file of [viaServer, direct]) {
          const text = readFileSync(file, 'utf8')
          expect(text).toContain('line\\u2028separator')
          expect(/[\u2028\u2029\u0085]/.test(text)).toBe(false) // written escaped: no reader can split there
        }
        const tables = (JSON.parse(readFileSync(direct, 'utf8').split('\n')[0]!).tables as unknown[]).length
        const targets: ('pglite' | 'postgres')[] = PG ? (from === 'pglite' ? ['postgres'] : ['pglite', 'postgres']) : ['pglite']
        for (const [i, to] of targets.entries()) {
          // the server's backup (taken a moment before the direct one) restores too, into the first target
          for (const file of i === 0 ? [viaServer, direct] : [direct]) {
            const t = await target(to)
            try {
              const restored = await arbor(['restore', file], t.env)
              expect([restored.code, restored.stderr.replace(/\d+ rows/, 'N rows').replace(/ into .*\n/, '\n')]).toEqual([
                0,
                `arbor: restored N rows of ${tables} tables\n`,
              ])
              if (file === direct) await compare(source, t.env)
            } finally {
              await t.drop()
            }
          }
        }
      } finally {
        await server.close()
      }
    }, 300_000) // several CLI runs, each restore into PGlite creating its database
})

describe('arbor backup into a directory that does not exist', () => {
  it('exits 1 at once with one line, from the database and through the server', async () => {
    const server = await startServer()
    try {
      const file = join(work, 'no-such-dir', 'b.ndjson')
      const line = `arbor backup: cannot write ${file}: the directory ${join(work, 'no-such-dir')} does not exist\n`
      for (const [args, env] of [
        [['backup', file], server.env],
        [['backup', file, '--url', server.url], { ADMIN_TOKEN }],
      ] as const) {
        const started = Date.now()
        const res = await arbor([...args], { ...env }, 15_000)
        expect([res.code, res.stderr, res.stdout]).toEqual([1, line, ''])
        expect(Date.now() - started).toBeLessThan(15_000)
      }
      expect(existsSync(join(work, 'no-such-dir'))).toBe(false)
      // a path that is a file where a directory should be
      writeFileSync(join(work, 'plain'), 'x')
      const res = await arbor(['backup', join(work, 'plain', 'b.ndjson')], server.env, 15_000)
      expect([res.code, res.stderr.split('\n').length]).toEqual([1, 2])
      expect(res.stderr).toStartWith(`arbor backup: cannot write ${join(work, 'plain', 'b.ndjson')}`)
    } finally {
      await server.close()
    }
  })
})
