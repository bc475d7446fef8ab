import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServerProcess, startServer } from './process'

// `arbor doctor` and `arbor restore` run in another shell than the server's, whose PORT may not be
// the server's (issue 55): doctor finds the server of the data directory and says where it is;
// restore into a running server's data directory says to stop or restore elsewhere; a refused
// restore leaves no directory behind. The server is PGlite: its data directory is what both read.
const ROOT = join(import.meta.dir, '..')
// No case here involves PostgreSQL: the server and every command run on PGlite (DATABASE_URL
// empty or unset) whatever TEST_DATABASE_URL says, so on CI's PostgreSQL pass the file would do
// again exactly what its run on the PGlite pass did; it runs on the PGlite pass alone.
const work = mkdtempSync(join(tmpdir(), 'arbor-cli-elsewhere-'))
let server: ServerProcess
afterAll(() => rmSync(work, { recursive: true, force: true }))

async function arbor(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** a port nothing listens on (taken, then let go) */
function freePort(): string {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return String(port)
}

const lastLine = (out: string) => out.trimEnd().split('\n').at(-1)

describe.skipIf(!!process.env.TEST_DATABASE_URL)('arbor beside a server of another shell', () => {
  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: '' })
  }, 60_000)
  afterAll(() => server.close())

  it('doctor with another PORT than the server: names where the server answers and how to reach it, never "All good."', async () => {
    const port = freePort()
    const serverPort = new URL(server.url).port
    const res = await arbor(['doctor'], { DATA_DIR: server.env.DATA_DIR!, PORT: port })
    expect(res.code).toBe(1)
    expect(res.stdout.split('\n').filter((l) => l.startsWith('FAIL'))).toEqual([
      `FAIL  server     the Arbor of this data directory (pid ${server.proc.pid}) answers at http://127.0.0.1:${serverPort}, not at http://127.0.0.1:${port} (PORT=${port}): arbor user, key and backup would not reach it`,
    ])
    expect(res.stdout).toContain(
      `→ set PORT=${serverPort} in this shell, as the server has it (or pass --url http://127.0.0.1:${serverPort})`,
    )
    expect(lastLine(res.stdout)).toBe('1 problem to fix.')
  })

  it('doctor with no server running: says it checked none, not "All good."', async () => {
    const port = freePort()
    const res = await arbor(['doctor'], { DATA_DIR: join(work, 'nothing-here'), PORT: port })
    expect(res.stdout).toContain(
      `ok    server     no Arbor answers at http://127.0.0.1:${port} (PORT=${port}); no running server to check\n`,
    )
    expect(lastLine(res.stdout)).toBe(`No problem found; no running Arbor was checked (none answers at http://127.0.0.1:${port}).`)
    expect(res.code).toBe(0)
    expect(existsSync(join(work, 'nothing-here'))).toBe(false)
  })

  it("restore into a running server's data directory: stop it or restore elsewhere, not ADMIN_TOKEN", async () => {
    const file = join(work, 'some.backup')
    writeFileSync(file, '{"not":"a backup"}\n')
    const before = readdirSync(server.env.DATA_DIR!).sort()
    const res = await arbor(['restore', file], { DATA_DIR: server.env.DATA_DIR! })
    expect(res.code).toBe(3)
    expect(res.stderr).toBe(
      `arbor restore: DATA_DIR ${server.env.DATA_DIR} is in use by another Arbor process (pid ${server.proc.pid}); stop it first, or set DATA_DIR to another directory. A restore goes only into an empty database that no server holds: restore into a new DATA_DIR, then start the server on it (arbor backup keeps what this one holds first)\n`,
    )
    expect(res.stderr).not.toContain('ADMIN_TOKEN')
    expect(readdirSync(server.env.DATA_DIR!).sort()).toEqual(before)
  })

  it('a refused restore creates no data directory, and leaves an existing empty one empty', async () => {
    const file = join(work, 'broken.backup')
    writeFileSync(file, '{"not":"a backup"}\n')
    const target = join(work, 'restored')
    const res = await arbor(['restore', file], { DATA_DIR: target })
    expect(res.code).toBe(1)
    expect(res.stderr).toEndWith('nothing was restored\n')
    expect(existsSync(target)).toBe(false)

    const empty = join(work, 'empty')
    mkdirSync(empty)
    const again = await arbor(['restore', file], { DATA_DIR: empty })
    expect(again.code).toBe(1)
    expect(readdirSync(empty)).toEqual([])
  }, 60_000)
})
