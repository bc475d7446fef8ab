import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { replicas, type ServerProcess, startServer } from './process'
import { ACTIONS, expectedFields, pickOf, type Replica, run, sweep } from './reads-writes'

// Issue 50, 1, through real server processes: two replicas of one PostgreSQL database, each
// answering cached reads from memory while it holds its lease (src/revisions/replicas.ts).
// Every action of POST /mutate with each of its fields is written on one or the other, and
// every cached read of both is then compared with what a third process, which keeps nothing
// (READ_CACHE_MB=0), answers from the database. On PGlite there is one process, and
// test/reads-cache.property.test.ts holds it.
const onPostgres = !!process.env.TEST_DATABASE_URL

describe.skipIf(!onPostgres)('every write on either of two replicas shows in the next read of both', () => {
  const pair = replicas()
  // the third process in a describe of its own, so that it has stopped before the pair's own
  // afterAll drops the database it reads (under load, a drop beside it once outran the 30 s of
  // a hook: CI with two test files at a time)
  describe('read against a third process that keeps nothing', () => {
    let oracle: ServerProcess
    const covered = new Set<string>()
    beforeAll(async () => {
      oracle = await startServer({ READ_CACHE_MB: '0' }, pair.a)
    }, 120_000)
    afterAll(() => oracle?.stop(), 60_000)

    // one `uncached` for both: what the oracle answers is read once per read and compared with both replicas
    const ask = (path: string) => oracle.call('GET', path)
    const both = (): Replica[] =>
      [pair.a, pair.b].map((server, i) => ({ name: i === 0 ? 'replica a' : 'replica b', call: server.call, uncached: ask }))

    it('each action with each of its fields, one at a time (updateIteration of gitTags alone among them)', async () => {
      // both replicas answer from memory: each holds its lease once it has renewed (within a second of its start)
      expect(await run(both(), sweep(), covered, { onceEachShape: true })).toEqual([])
    }, 900_000)

    it('random sequences of writes on either replica (fast-check)', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(...ACTIONS.map(pickOf)), { minLength: 1, maxLength: 5 }), async (picks) => {
          expect(await run(both(), picks, covered)).toEqual([])
        }),
        { numRuns: 5 },
      )
    }, 600_000)

    it('covered every action and every field of it', () => {
      expect(expectedFields().filter((f) => !covered.has(f))).toEqual([])
    })
  })
})
