import { afterAll, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { CLAIM_EVERY_MS, createDeliveryRunner } from '../src/webhooks/delivery'
import { startApp } from './helpers'

// The `events` wake-up's runner (src/webhooks/delivery.ts) under a stream of wake-ups: each write
// wakes it, and a wake-up that comes while a fan-out runs asks for one more, CLAIM_EVERY_MS after
// the last one began, never at once (at once, a stream of writes made one fan-out per write).
const app = await startApp()
afterAll(() => app.close())

/** `db` counting the fan-out statements it sends (sql/webhooks/fan-out.sql moves webhook_cursors). */
function counting(db: Db, count: { fanOuts: number }): Db {
  return new Proxy(db, {
    get(target, key) {
      if (key === 'query')
        return (text: string, params?: unknown[]) => {
          if (text.includes('webhook_cursors')) count.fanOuts++
          return target.query(text, params)
        }
      // PostgreSQL sends it in a transaction of its own (withoutFlushWait)
      if (key === 'tx') return <T>(fn: (tx: Db) => Promise<T>) => target.tx((tx) => fn(counting(tx, count)))
      const v = Reflect.get(target, key)
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
}

it('folds a stream of wake-ups into one fan-out every CLAIM_EVERY_MS, not one per wake-up', async () => {
  const count = { fanOuts: 0 }
  const runner = createDeliveryRunner({ ...app.deps, db: counting(app.deps.db, count) })
  // wake-ups back to back, every turn of the event loop, for six intervals
  const started = performance.now()
  let wakes = 0
  while (performance.now() - started < 6 * CLAIM_EVERY_MS) {
    runner.run()
    wakes++
    await new Promise((resolve) => setImmediate(resolve))
  }
  const elapsed = performance.now() - started
  await runner.stop()
  expect(wakes).toBeGreaterThan(count.fanOuts)
  expect(count.fanOuts).toBeGreaterThanOrEqual(1)
  // one at the first wake-up, then at most one per interval that began while the stream lasted
  expect(count.fanOuts).toBeLessThanOrEqual(Math.ceil(elapsed / CLAIM_EVERY_MS) + 1)
})
