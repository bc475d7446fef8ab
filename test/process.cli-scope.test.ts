import { afterAll, expect, it } from 'bun:test'
import { join } from 'node:path'
import { ADMIN_TOKEN } from './helpers'
import { freshDatabase, type ServerProcess, startServer } from './process'

// live.md §6: `arbor key mint USER --role … --project …` mints a scoped key straight on the database
const ROOT = join(import.meta.dir, '..')
const PG = !!process.env.TEST_DATABASE_URL
const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', LOG_LEVEL: 'warn' }

async function arbor(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...BASE_ENV, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

const db = await freshDatabase()
const servers: ServerProcess[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
  await db.drop()
})

it('arbor key mint --role --project mints a scoped key offline; a bad role or project list is refused', async () => {
  let server = await startServer({}, { env: db.env } as ServerProcess)
  servers.push(server)
  const owner = server.ownerKey
  expect(
    (await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'alpha', id: 'alpha' } } })).status,
  ).toBe(200)
  if (!PG) await server.stop() // the embedded database belongs to one process at a time

  const bad = await arbor(['key', 'mint', 'owner', '--role', 'boss'], db.env)
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('--role must be one of read, propose, work, write')
  const tooMany = await arbor(['key', 'mint', 'owner', ...Array.from({ length: 51 }, (_, i) => ['--project', `p${i}`]).flat()], db.env)
  expect(tooMany.code).toBe(2)
  expect(tooMany.stderr).toContain('--project must hold 1 to 50 project ids (got 51)')
  const blank = await arbor(['key', 'mint', 'owner', '--project', 'alpha', '--project', ''], db.env)
  expect(blank.code).toBe(2)
  expect(blank.stderr).toContain('--project must be a project id of 1 to 200 characters; got ""')

  const minted = await arbor(['key', 'mint', 'owner', '--label', 'reader', '--role', 'read', '--project', 'alpha'], db.env)
  expect(minted.code).toBe(0)
  expect(minted.stdout).toMatch(/\nkey key_\S+ {2}role=read projects=alpha\nAPI key \(shown once\): arb_/)
  const key = /^API key \(shown once\): (arb_[0-9A-Za-z]+)$/m.exec(minted.stdout)![1]!

  if (!PG) {
    server = await startServer({}, { env: db.env, ownerKey: owner } as ServerProcess)
    servers.push(server)
  }
  const listed = (await server.call('GET', '/api/v1/keys')).body.keys
  expect(listed.map((k: any) => [k.label, k.scope])).toEqual([
    [null, { role: 'write' }],
    ['reader', { role: 'read', projects: ['alpha'] }],
  ])
  expect((await server.call('GET', '/api/v1/nodes?projectId=alpha', { key })).status).toBe(200)
  const add = () =>
    server.call('POST', '/api/v1/mutate', {
      key,
      body: { action: 'add', projectId: 'alpha', node: { type: 'goal', data: { label: 'G' } } },
    })
  const refused = await add()
  expect([refused.status, refused.body.error]).toEqual([403, 'key_scope'])

  // arbor key scope, through the running server's admin API: the key may write now, at once
  const keyId = listed[1].keyId
  const widened = await arbor(['key', 'scope', keyId, '--role', 'write', '--url', server.url], { ADMIN_TOKEN })
  expect({ code: widened.code, stdout: widened.stdout }).toEqual({ code: 0, stdout: `key ${keyId}  role=write\n` })
  expect((await add()).status).toBe(200)
  expect((await server.call('GET', '/api/v1/keys')).body.keys[1].scope).toEqual({ role: 'write' })
  const noRole = await arbor(['key', 'scope', keyId, '--url', server.url], { ADMIN_TOKEN })
  expect(noRole.code).toBe(2)
}, 120_000)
