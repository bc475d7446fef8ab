import { afterAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { ADMIN_TOKEN } from './helpers'
import { freshDatabase, type ServerProcess, startServer } from './process'

/**
 * The first start, as a new user lives it (issue 47): a start on a taken port says so in one line
 * and creates nobody, so the next start prints the owner key; `arbor key mint` gives a key for an
 * existing user straight on the database; `npm start` stopped by its pid frees the port; the CLI
 * names the values an enum flag takes.
 */
const ROOT = join(import.meta.dir, '..')
const PG = !!process.env.TEST_DATABASE_URL
const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', LOG_LEVEL: 'warn' }

async function run(cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...BASE_ENV, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}
const arbor = (args: string[], env: Record<string, string>) => run([process.execPath, 'src/cli/main.ts', ...args], env)

/** Poll until `fn` is true, or fail after `ms`. */
async function until(fn: () => Promise<boolean> | boolean, ms: number, what: string) {
  const end = Date.now() + ms
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms`)
    await Bun.sleep(50)
  }
}

// an empty DATA_DIR on PGlite: the server runs initdb itself, as on a user's first start
const db = await freshDatabase({ empty: true })
const servers: ServerProcess[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
  await db.drop()
})

describe('the first start', () => {
  it('on a taken port says so in one line, exits 1 and creates nobody; the next start prints the key', async () => {
    const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    let first: Awaited<ReturnType<typeof run>>
    try {
      first = await run([process.execPath, 'src/main.ts'], { ...db.env, PORT: String(taken.port) })
    } finally {
      taken.stop(true)
    }
    expect({ code: first.code, stdout: first.stdout, stderr: first.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: `arbor: port ${taken.port} on 127.0.0.1 is in use by another program: stop it, or set PORT to a free port\n`,
    })
    // `on` with no key: the start reads the key from its own output, as a person would
    const server = await startServer({ ADMIN_TOKEN }, { env: db.env } as ServerProcess)
    servers.push(server)
    expect(server.ownerKey).toMatch(/^arb_[0-9A-Za-z]{32,}$/)
    expect(server.output()).toContain('Arbor app: ')
    expect((await server.call('GET', '/api/v1/projects')).status).toBe(200)
  }, 90_000)

  it('arbor key mint gives an existing user a working key, straight on the database', async () => {
    const server = servers[0]!
    if (!PG) {
      // the embedded database belongs to the running server: the command says how to go on
      const busy = await arbor(['key', 'mint', 'owner'], db.env)
      expect(busy.code).toBe(3)
      expect(busy.stderr).toMatch(
        /^arbor key: DATA_DIR .* is in use by another Arbor process .*; stop it first, or set DATA_DIR to another directory; or mint through the server: arbor key create USER_ID \(with ADMIN_TOKEN\)\n$/,
      )
      await server.stop()
    }
    const unknown = await arbor(['key', 'mint', 'nobody'], db.env)
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 1,
      stderr: 'arbor key: no user has the id or name nobody (arbor user list names them)\n',
    })
    const minted = await arbor(['key', 'mint', 'owner', '--label', 'recovered'], db.env)
    expect(minted.code).toBe(0)
    const key = /^API key \(shown once\): (arb_[0-9A-Za-z]+)$/m.exec(minted.stdout)?.[1]
    expect(minted.stdout).toMatch(/^usr_\S+ {2}owner {2}tier=team status=active\nkey key_\S+\nAPI key \(shown once\): arb_/)
    // on PostgreSQL the running server hears of the new key at once; on PGlite it is started again
    const live = PG ? server : await startServer({}, { env: db.env, ownerKey: key } as ServerProcess)
    if (!PG) servers.push(live)
    const res = await live.call('GET', '/api/v1/keys', { key })
    expect(res.status).toBe(200)
    expect(res.body.keys.map((k: { label: string | null }) => k.label)).toEqual([null, 'recovered'])
  }, 90_000)

  it('names the values of an enum flag, in the refusal and in --help, and the server names them too', async () => {
    const bad = await arbor(['user', 'add', 'ann', '--tier', 'gold'], {})
    expect(bad.code).toBe(2)
    expect(bad.stderr.split('\n')[0]).toBe('arbor: user: --tier must be one of free, strategist, builder, team; got gold')
    const help = await arbor(['--help'], {})
    expect(help.stdout).toContain('T: free, strategist, builder, team   S: active, trialing, past_due, canceled')
    const server = servers.at(-1)!
    const res = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'ann', tier: 'gold', status: 'paused' } })
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: {
        success: false,
        errors: ['tier: must be one of free, strategist, builder, team', 'status: must be one of active, trialing, past_due, canceled'],
      },
    })
  }, 30_000)
})

describe('the CLI over HTTP', () => {
  it('says it is the CLI on every call (X-Arbor-Via: cli)', async () => {
    const seen: (string | null)[] = []
    const fake = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req) => {
        seen.push(req.headers.get('x-arbor-via'))
        return Response.json({ users: [] })
      },
    })
    try {
      const res = await arbor(['user', 'list', '--url', `http://127.0.0.1:${fake.port}`], { ADMIN_TOKEN })
      expect({ code: res.code, seen }).toEqual({ code: 0, seen: ['cli'] })
    } finally {
      fake.stop(true)
    }
  })
})

describe('npm start', () => {
  it('passes SIGTERM to the server: the process exits and the port is free', async () => {
    const other = await freshDatabase()
    const proc = Bun.spawn(['npm', 'start', '--silent'], {
      cwd: ROOT,
      env: { ...BASE_ENV, ...other.env, PORT: '0', LOG_LEVEL: 'info' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    let out = ''
    const read = async (s: ReadableStream<Uint8Array>) => {
      for await (const c of s) out += new TextDecoder().decode(c)
    }
    void read(proc.stdout)
    void read(proc.stderr)
    try {
      let url = ''
      await until(
        () => {
          url = /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/.exec(out)?.[1] ?? ''
          return !!url
        },
        60_000,
        'npm start listening',
      )
      expect((await fetch(`${url}/healthz`)).status).toBe(200)
      proc.kill('SIGTERM') // the pid of npm itself, as a service manager would
      await until(() => proc.exitCode !== null || proc.signalCode !== null, 20_000, 'npm start exits')
      await until(
        () =>
          fetch(`${url}/healthz`).then(
            () => false,
            () => true, // refused: nothing serves the port any more
          ),
        20_000,
        'the port freed',
      )
      expect(out).toContain('"msg":"stopped"')
    } finally {
      proc.kill('SIGKILL')
      await other.drop()
    }
  }, 90_000)
})
