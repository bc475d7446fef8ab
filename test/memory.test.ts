import { describe, expect, it } from 'bun:test'
import { BUSY_GROWTH_BYTES, BUSY_SHARE, GROWTH_BYTES, memoryKeeper, memoryLoop } from '../src/maintenance/memory'
import { loops } from '../src/scheduler'

const MB = 1024 * 1024
/** A clock and CPU meter for the keeper: `idle(ms)` and `work(ms)` move time on, with or without CPU spent. */
function meters() {
  let now = 0
  let cpu = 0
  return {
    cpuMs: () => cpu,
    nowMs: () => now,
    idle: (ms: number) => {
      now += ms
    },
    work: (ms: number) => {
      now += ms
      cpu += ms
    },
  }
}

describe('the memory loop (src/maintenance/memory.ts)', () => {
  it('collects only once RSS stands GROWTH_BYTES above what the last collection left', () => {
    let rss = 200 * MB
    let collections = 0
    const m = meters()
    const keeper = memoryKeeper(
      () => rss,
      () => {
        collections++
        rss -= 60 * MB // what the collection handed back
      },
      m.cpuMs,
      m.nowMs,
    )
    m.idle(2000)
    rss += GROWTH_BYTES - MB
    expect(keeper.check()).toEqual({ collected: false })
    rss += 2 * MB
    const before = 200 * MB + GROWTH_BYTES + MB
    expect(keeper.check()).toEqual({ collected: true, beforeBytes: before, afterBytes: before - 60 * MB })
    // measured from what it left, not from the start
    rss = before - 60 * MB + GROWTH_BYTES - MB
    expect(keeper.check()).toEqual({ collected: false })
    expect(collections).toBe(1)
  })

  it('follows RSS down when the allocator hands pages back by itself', () => {
    let rss = 300 * MB
    const m = meters()
    const keeper = memoryKeeper(
      () => rss,
      () => {},
      m.cpuMs,
      m.nowMs,
    )
    m.idle(2000)
    rss = 150 * MB
    expect(keeper.check()).toEqual({ collected: false })
    rss = 150 * MB + GROWTH_BYTES
    expect(keeper.check().collected).toBe(true)
  })

  it('waits while the process is busy, unless RSS stands BUSY_GROWTH_BYTES above the last collection', () => {
    let rss = 200 * MB
    let collections = 0
    const m = meters()
    const keeper = memoryKeeper(
      () => rss,
      () => {
        collections++
        rss -= 40 * MB
      },
      m.cpuMs,
      m.nowMs,
    )
    // a read load: most of a core since the last check
    rss += GROWTH_BYTES + 10 * MB
    m.work(1800)
    m.idle(200)
    expect(keeper.check()).toEqual({ collected: false })
    // just under the busy share: not busy, so the growth is collected
    m.work(2000 * BUSY_SHARE - 10)
    m.idle(2000 * (1 - BUSY_SHARE) + 10)
    expect(keeper.check().collected).toBe(true)
    // busy again, and RSS keeps rising: collected at BUSY_GROWTH_BYTES, not before
    const floor = rss
    rss = floor + BUSY_GROWTH_BYTES - MB
    m.work(2000)
    expect(keeper.check()).toEqual({ collected: false })
    rss = floor + BUSY_GROWTH_BYTES
    m.work(2000)
    expect(keeper.check()).toEqual({
      collected: true,
      beforeBytes: floor + BUSY_GROWTH_BYTES,
      afterBytes: floor + BUSY_GROWTH_BYTES - 40 * MB,
    })
    // the burst over: what is left above the new floor waits for the next growth
    m.idle(2000)
    expect(keeper.check()).toEqual({ collected: false })
    expect(collections).toBe(2)
  })

  it('hands garbage ArrayBuffers back to the system in a real collection', () => {
    // the real RSS and collector; this test process counts as idle (it is busy allocating)
    const m = meters()
    const keeper = memoryKeeper(undefined, undefined, m.cpuMs, m.nowMs)
    m.idle(2000)
    // what an import leaves: buffers nobody holds any more, touched so that they are resident
    for (let i = 0; i < 24; i++) new Uint8Array(8 * MB).fill(1)
    const done = keeper.check()
    expect(done.collected).toBe(true)
    if (done.collected) expect(done.beforeBytes - done.afterBytes).toBeGreaterThan(GROWTH_BYTES / 2)
  })

  it('runs with the other loops', () => {
    expect(loops).toContain(memoryLoop)
  })
})
