import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { type ServerProcess, startServer } from './process'

/**
 * 700 canvas long polls (`GET /view/commands?wait=15000&revision=R`) held on one project, one
 * tree write: every poll answers with the new revision, long before its wait ends. Each poll's
 * heartbeat takes a transaction id, so on PGlite the 700 carry the ids from three digits to four;
 * the revision was once the newest event by the text of its id ('999' > '1000'), so after that
 * crossing every poll kept the old revision and answered only at its timeout (and a feed page
 * that spanned the crossing came out of order). Both are asked here.
 */
const POLLS = 700
const txidOf = (cursor: string) => BigInt(cursor.split('_')[0]!)

describe('a tree write wakes 700 canvas polls', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it('answers every poll with the new revision well before its wait ends', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Canvas', id: 'canvas' } } })
    const add = (label: string) =>
      server.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId: 'canvas', node: { type: 'goal', data: { label } } },
      })
    expect((await add('before')).status).toBe(200)
    // the revision once the write's event shows (on PostgreSQL once older transactions end)
    const revision = await server.until(
      async () => (await server.call('GET', '/api/v1/view/commands?projectId=canvas&wait=0')).body.revision,
    )

    const worker = new Worker(new URL('../bench/lib/hold-events-worker.ts', import.meta.url))
    const messages: Record<string, unknown>[] = []
    worker.onmessage = (e) => messages.push(e.data)
    worker.postMessage({
      base: server.url,
      key: server.ownerKey,
      path: `/api/v1/view/commands?projectId=canvas&wait=15000&revision=${revision}`,
      n: POLLS,
      // an answer counts only with a revision other than the one the poll sent
      match: `"revision":"(?!${revision}")[^"]`,
    })
    try {
      await server.until(async () => messages.some((m) => 'held' in m), 30_000, 'every poll sent')
      // each poll writes its heartbeat first; a poll of our own, queued behind them, answers once they are done
      await server.call('GET', '/api/v1/view/commands?projectId=canvas&wait=0')
      expect(messages.some((m) => 'answered' in m)).toBe(false)
      const wrote = Date.now()
      expect((await add('wake up')).status).toBe(200)
      await server.until(async () => messages.some((m) => 'answered' in m), 20_000, 'every poll answered')
      const tookMs = Date.now() - wrote
      console.log(`${POLLS} canvas polls answered ${tookMs} ms after the write`)
      expect(messages.find((m) => 'answered' in m)).toEqual({ answered: POLLS, byStatus: { 200: POLLS }, withEvents: POLLS })
      // answered by the wake-up, not by their 15 s timeout (a structural bound, not a timing figure)
      expect(tookMs).toBeLessThan(10_000)
    } finally {
      worker.terminate()
    }

    const now = (await server.call('GET', '/api/v1/view/commands?projectId=canvas&wait=0')).body.revision as string
    if (!process.env.TEST_DATABASE_URL) {
      // on PGlite (ids of this database alone) the polls carried the ids across a power of ten
      expect(String(txidOf(now)).length).toBeGreaterThan(String(txidOf(revision)).length)
    }
    // the feed, one event a page, in transaction order across the crossing, and the last cursor is the revision
    const all = (await server.call('GET', '/api/v1/events?projectId=canvas&limit=500')).body
    const cursors: string[] = []
    let after = ''
    for (;;) {
      const page = (await server.call('GET', `/api/v1/events?projectId=canvas&limit=1&after=${after}`)).body
      if (!page.events.length) break
      after = page.nextCursor
      cursors.push(after)
    }
    expect(cursors.length).toBe(all.events.length)
    expect(cursors.at(-1)).toBe(now)
    for (let i = 1; i < cursors.length; i++) expect(txidOf(cursors[i]!)).toBeGreaterThanOrEqual(txidOf(cursors[i - 1]!))
  }, 120_000)
})
