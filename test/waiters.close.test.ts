import { describe, expect, it } from 'bun:test'
import type { Db } from '../src/db'
import { createWaiters, waitFor } from '../src/events/waiters'

// Shutdown (SIGTERM: main.ts closes the waiters) answers every held long poll at once, including
// one that a commit woke, whose read found nothing yet, and that is pausing to read again: before,
// such a request read in a loop until its own deadline and held the drain (and `docker stop`) up.
type Listener = { message(key: string): void; up(): void; down(): void }

function fakeDb() {
  const listeners = new Set<Listener>()
  const db = {
    async listen(_channel: string, listener: Listener) {
      listeners.add(listener)
      listener.up()
      return async () => void listeners.delete(listener)
    },
    async notify(_channel: string, key: string) {
      for (const l of listeners) l.message(key)
    },
  }
  return db as unknown as Db
}

const quietLog = { warn() {}, info() {} }

describe('waiters: close', () => {
  it('answers a held request at once, and one that was woken and is pausing to read again', async () => {
    const db = fakeDb()
    const waiters = createWaiters(db, quietLog)
    let reads = 0
    let slept = false
    const held = waitFor(
      waiters,
      ['events:p'],
      Date.now() + 30_000,
      async () => {
        reads++
        return null
      },
      () => (slept = true),
    )
    // asleep, then woken by a commit whose rows its read does not find yet: it pauses and reads again
    for (let i = 0; i < 500 && !slept; i++) await Bun.sleep(2)
    expect(slept).toBe(true)
    await waiters.signal(db, 'events:p')
    for (let i = 0; i < 500 && reads < 3; i++) await Bun.sleep(2)
    expect(reads).toBeGreaterThanOrEqual(3)
    const before = reads
    waiters.close()
    expect(waiters.closed()).toBe(true)
    expect(await held).toBeNull()
    // at most the read under way and the one last read, not a loop until the deadline
    expect(reads - before).toBeLessThanOrEqual(2)
    // a request that arrives after close does not wait at all
    expect(await waiters.wait(['events:p'], 30_000)).toBe(false)
  })
})
