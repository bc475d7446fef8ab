import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import postgres from 'postgres'
import { type ServerProcess, startServer } from './process'

// What a caller found in the events, the plan it reads next shows. On PostgreSQL a replica's read
// cache trusts the revision it knows until its LISTEN connection hears of a change, and a write
// answers only once it has; but the commit is visible to every statement before that. The live
// canvas's poll (or GET /events) could read the new revision in between, and the page's reload
// of the plan get the answer kept from before it: the page then showed the old plan for good
// (process.canvas flaked so on the PostgreSQL pass of CI). Here the window is held open: the
// server's LISTEN backend is stopped (SIGSTOP) while a write commits, so its notifications wait.
// On PGlite the commit's notification is delivered before any other statement runs: no window.
const PG_URL = process.env.TEST_DATABASE_URL
const local = !!PG_URL && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(PG_URL).hostname)
if (PG_URL && !local) console.warn('process.read-after-event.test.ts: skipped, it stops a backend of a local PostgreSQL only')

describe.skipIf(!local)('a read after an event shows the event (PostgreSQL)', () => {
  let server: ServerProcess
  let sql: postgres.Sql
  const projectId = 'rae'

  beforeAll(async () => {
    server = await startServer()
    sql = postgres(server.env.DATABASE_URL!, { max: 1, onnotice: () => {} })
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Read after event', id: projectId } } })
    await server.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'First' } } } })
  })
  afterAll(async () => {
    await sql?.end()
    await server?.close()
  })

  /** The server's LISTEN backend, a local postgres process (checked, so no other process is signalled). */
  async function listenBackend(): Promise<number> {
    const db = new URL(server.env.DATABASE_URL!).pathname.slice(1)
    const [row] = await sql`select pid from pg_stat_activity where datname = ${db} and application_name = 'arbor-listen'`
    const pid = Number(row?.pid)
    const cmdline = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : ''
    expect(cmdline).toContain('postgres')
    return pid
  }

  const labels = async (path: string) => {
    const res = await server.call('GET', path)
    expect(res.status).toBe(200)
    return (res.body.nodes as { data: { label: string } }[]).map((n) => n.data.label).sort()
  }

  /** A goal added while the server cannot hear it: the write commits, then waits to be heard. */
  function addUnheard(label: string) {
    return server.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId, node: { type: 'goal', data: { label } } } })
  }

  it("the canvas's poll, then the plan; GET /events, then the plan", async () => {
    const nodes = `/api/v1/nodes?projectId=${projectId}`
    expect(await labels(nodes)).toEqual(['First']) // kept, at the revision this replica knows
    const start = await server.call('GET', `/api/v1/view/commands?projectId=${projectId}&wait=0`)
    const events = await server.call('GET', `/api/v1/events?projectId=${projectId}`)
    const pid = await listenBackend()
    process.kill(pid, 'SIGSTOP')
    let second: ReturnType<typeof addUnheard> | undefined
    let third: ReturnType<typeof addUnheard> | undefined
    try {
      second = addUnheard('Second')
      // the poll sees the commit: a new revision (the page reloads the plan on it)
      await server.until(async () => {
        const poll = await server.call('GET', `/api/v1/view/commands?projectId=${projectId}&wait=0&revision=${start.body.revision}`)
        return poll.body.revision !== start.body.revision
      })
      expect(await labels(nodes)).toEqual(['First', 'Second'])
      // the write has not answered: the server has not heard its commit
      expect(await Promise.race([second.then(() => 'answered'), Bun.sleep(100).then(() => 'waiting')])).toBe('waiting')

      third = addUnheard('Third')
      const seen = await server.until(async () => {
        const page = await server.call('GET', `/api/v1/events?projectId=${projectId}&after=${events.body.nextCursor}`)
        return page.body.events.some((e: { node?: { data: { label: string } } }) => e.node?.data.label === 'Third')
      })
      expect(seen).toBe(true)
      expect(await labels(nodes)).toEqual(['First', 'Second', 'Third'])
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    expect((await second!).status).toBe(200)
    expect((await third!).status).toBe(200)
    expect(await labels(nodes)).toEqual(['First', 'Second', 'Third'])
  }, 60_000)
})
