import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import postgres from 'postgres'
import { type ServerProcess, startServer } from './process'

/**
 * A failed release of an Idempotency-Key (issue 43, item 4): when a write fails with a 5xx and
 * freeing its key fails too, the failure is logged with its reason and the release retried
 * until it lands, so the client's retry runs instead of meeting 409 "in progress" for 10
 * minutes. PostgreSQL only: the test makes the database refuse the write and the release from
 * outside, with triggers it adds and then drops (PGlite lives inside the server process).
 */
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('a key whose release failed', () => {
  let server: ServerProcess
  let direct: ReturnType<typeof postgres>
  beforeAll(async () => {
    server = await startServer()
    direct = postgres(server.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
  })
  afterAll(async () => {
    await direct?.end()
    await server?.close()
  })

  it('logs the failed release with its reason, repairs it once the database lets it, and the retry runs', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Stuck', id: 'stuck' } } })
    const body = { action: 'add', projectId: 'stuck', node: { type: 'task', data: { label: 'written on the retry' } } }
    await direct.unsafe(`
      create function fail_now() returns trigger language plpgsql as $$
      begin raise exception 'injected failure on %', tg_table_name; end $$;
      create trigger fail_insert before insert on nodes for each row execute function fail_now();
      create trigger fail_release before delete on idempotency_keys for each row execute function fail_now();`)
    const first = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'stuck-1' }, body })
    expect(first.status).toBe(500)
    await server.until(
      async () => server.output().includes('idempotency key release failed; retrying'),
      10_000,
      'the failed release logged',
    )
    expect(server.output()).toContain('injected failure on idempotency_keys')
    await direct.unsafe('drop trigger fail_insert on nodes; drop trigger fail_release on idempotency_keys; drop function fail_now()')
    await server.until(
      async () => server.output().includes('idempotency key released after a failed release'),
      30_000,
      'the release repaired',
    )
    const retry = await server.call('POST', '/api/v1/mutate', { headers: { 'idempotency-key': 'stuck-1' }, body })
    expect(retry.status).toBe(200)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
    expect(retry.body.node.data.label).toBe('written on the retry')
  })
})
