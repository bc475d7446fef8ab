import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { ReadCache } from '../src/reads/cache'
import type { Replicas } from '../src/revisions/replicas'
import { type Res, startApp, type TestApp } from './helpers'
import { ACTIONS, expectedFields, pickOf, type Replica, run, sweep } from './reads-writes'

// Issue 50, 1: every committed write shows in the very next read of every cached endpoint,
// whether or not it sends an event (updateIteration changing only gitTags sent none, and
// GET /iterations kept answering from before it). Every action of POST /mutate, with every one
// of its fields (and every field of a node's data), runs against every cached read; after each
// write every read of each replica is compared with what that same replica answers with no
// cache at all (the writes: ./reads-writes.ts). On PostgreSQL two apps on one database are
// two replicas (writes alternate between them, both renew their lease, so each answers from
// memory whenever it may); on PGlite there is one process. test/process.reads-property.test.ts
// does the same through two real server processes on one PostgreSQL.
const onPostgres = !!process.env.TEST_DATABASE_URL
let a: TestApp
let b: TestApp
const replicas = (): Replica[] =>
  (onPostgres ? [a, b] : [a]).map((app, i) => ({ name: i === 0 ? 'a' : 'b', call: app.call, uncached: (path) => uncached(app, path) }))
const covered = new Set<string>()

beforeAll(async () => {
  a = await startApp({}, onPostgres ? { persist: true } : {})
  if (onPostgres) {
    b = await startApp({}, { reopen: a })
    for (const app of [a, b]) await (app.deps.replicas as unknown as Replicas).start()
  } else b = a
})
afterAll(async () => {
  if (onPostgres) await b?.close()
  await a?.close()
})

/** What `app` answers for `path` with a cache that keeps nothing swapped in. */
async function uncached(app: TestApp, path: string): Promise<Res> {
  const kept = app.deps.reads
  app.deps.reads = new ReadCache({ db: app.deps.db, now: () => app.deps.now(), maxBytes: 0 })
  try {
    return await app.call('GET', path)
  } finally {
    app.deps.reads = kept
  }
}

describe('every write shows in the very next read of every cached endpoint', () => {
  it('each action with each of its fields, one at a time (updateIteration of gitTags alone among them)', async () => {
    expect(await run(replicas(), sweep(), covered, { onceEachShape: true })).toEqual([])
  }, 600_000)

  it('random sequences of writes on either replica (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(...ACTIONS.map(pickOf)), { minLength: 1, maxLength: 6 }), async (picks) => {
        expect(await run(replicas(), picks, covered)).toEqual([])
      }),
      { numRuns: 12 },
    )
  }, 600_000)

  it('covered every action and every field of it', () => {
    expect(expectedFields().filter((f) => !covered.has(f))).toEqual([])
  })
})
