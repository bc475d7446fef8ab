import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createCommitHandOff, OUTBOX_COMMITTED } from '../src/search/commits'
import { startApp, type TestApp } from './helpers'

/**
 * The PGlite commit hand-off (src/search/commits.ts): one per app, built in createDeps. What a
 * transaction announces is handed over once its notification arrives; another app's
 * notifications on the same database hand over nothing of this one's, and drop nothing of it.
 */
describe('the commit hand-off', () => {
  let app: TestApp
  let stopListening: () => Promise<void>
  const told: string[] = []
  beforeAll(async () => {
    app = await startApp()
    // on PostgreSQL the listening connection is opened by the first listen: wait until it follows
    const following = Promise.withResolvers<void>()
    stopListening = await app.db.listen(OUTBOX_COMMITTED, {
      message: (payload) => void told.push(payload),
      up: () => following.resolve(),
      down() {},
    })
    await following.promise
  })
  afterAll(async () => {
    await stopListening()
    await app.close()
  })

  const heard = async (n: number) => {
    const deadline = Date.now() + 10_000
    while (told.length < n && Date.now() < deadline) await Bun.sleep(5)
    return told.slice(0, n)
  }

  it('hands over what a committed transaction announced, to its own hand-off only', async () => {
    const mine = createCommitHandOff()
    const other = createCommitHandOff()
    const event = { seq: 7, payload: { event: 'node.added', node: { id: 'task-1' } } }
    await app.db.tx((tx) => other.announce(tx, 'p-other', [{ seq: 6, payload: { event: 'node.added' } }]))
    await app.db.tx((tx) => mine.announce(tx, 'p-mine', [event]))
    const [fromOther, fromMine] = await heard(2)
    // the other app's commit: the project is named, the events are not ours to give
    expect(mine.take(fromOther!)).toEqual({ projectId: 'p-other' })
    // and taking it dropped nothing this hand-off still holds
    expect(mine.take(fromMine!)).toEqual({ projectId: 'p-mine', events: [event] })
    expect(other.take(fromOther!)).toEqual({ projectId: 'p-other', events: [{ seq: 6, payload: { event: 'node.added' } }] })
  })

  it('drops what a rolled-back transaction announced once a later commit is told', async () => {
    const handOff = createCommitHandOff()
    const before = told.length
    await app.db
      .tx(async (tx) => {
        await handOff.announce(tx, 'p', [{ seq: 1, payload: {} }])
        throw new Error('rolled back')
      })
      .catch(() => undefined) // the rollback is the point of this test
    await app.db.tx((tx) => handOff.announce(tx, 'p', [{ seq: 2, payload: {} }]))
    const [later] = (await heard(before + 1)).slice(before)
    expect(handOff.take(later!)).toEqual({ projectId: 'p', events: [{ seq: 2, payload: {} }] })
    // the rolled-back transaction was never told: its token (the one before) finds nothing now
    expect(handOff.take(later!.replace(/:(\d+) /, (_, n) => `:${Number(n) - 1} `))).toEqual({ projectId: 'p', events: undefined })
  })
})
