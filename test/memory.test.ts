import { describe, expect, it } from 'bun:test'
import { BUSY_GROWTH_BYTES, BUSY_SHARE, GROWTH_BYTES, memoryKeeper, memoryLoop } from '../src/maintenance/memory'
import { loops } from '../src/scheduler'

const MB = 1024 * 1024
/**
 * A simulated process around a keeper: `rss` bytes, a collection that hands back `freed` bytes
 * and is counted, and a clock that `idle(ms)` and `work(ms)` move on, with or without CPU spent.
 */
function simulated(rssBytes: number, freed: number) {
  let now = 0
  let cpu = 0
  const state = { rss: rssBytes, collections: 0 }
  const keeper = memoryKeeper(
    () => state.rss,
    () => {
      state.collections++
      state.rss -= freed
    },
    () => cpu,
    () => now,
  )
  const idle = (ms: number) => {
    now += ms
  }
  const work = (ms: number) => {
    now += ms
    cpu += ms
  }
  return Object.assign(state, { keeper, idle, work })
}

describe('the memory loop (src/maintenance/memory.ts)', () => {
  it('collects only once RSS stands GROWTH_BYTES above what the last collection left', () => {
    const p = simulated(200 * MB, 60 * MB)
    p.idle(2000)
    p.rss += GROWTH_BYTES - MB
    expect(p.keeper.check()).toEqual({ collected: false })
    p.rss += 2 * MB
    const before = 200 * MB + GROWTH_BYTES + MB
    expect(p.keeper.check()).toEqual({ collected: true, beforeBytes: before, afterBytes: before - 60 * MB })
    // measured from what it left, not from the start
    p.rss = before - 60 * MB + GROWTH_BYTES - MB
    expect(p.keeper.check()).toEqual({ collected: false })
    expect(p.collections).toBe(1)
  })

  it('follows RSS down when the allocator hands pages back by itself', () => {
    const p = simulated(300 * MB, 0)
    p.idle(2000)
    p.rss = 150 * MB
    expect(p.keeper.check()).toEqual({ collected: false })
    p.rss = 150 * MB + GROWTH_BYTES
    expect(p.keeper.check().collected).toBe(true)
  })

  it('waits while the process is busy, unless RSS stands BUSY_GROWTH_BYTES above the last collection', () => {
    const p = simulated(200 * MB, 40 * MB)
    // a read load: most of a core since the last check
    p.rss += GROWTH_BYTES + 10 * MB
    p.work(1800)
    p.idle(200)
    expect(p.keeper.check()).toEqual({ collected: false })
    // just under the busy share: not busy, so the growth is collected
    p.work(2000 * BUSY_SHARE - 10)
    p.idle(2000 * (1 - BUSY_SHARE) + 10)
    expect(p.keeper.check().collected).toBe(true)
    // busy again, and RSS keeps rising: collected at BUSY_GROWTH_BYTES, not before
    const floor = p.rss
    p.rss = floor + BUSY_GROWTH_BYTES - MB
    p.work(2000)
    expect(p.keeper.check()).toEqual({ collected: false })
    p.rss = floor + BUSY_GROWTH_BYTES
    p.work(2000)
    expect(p.keeper.check()).toEqual({
      collected: true,
      beforeBytes: floor + BUSY_GROWTH_BYTES,
      afterBytes: floor + BUSY_GROWTH_BYTES - 40 * MB,
    })
    // the burst over: what is left above the new floor waits for the next growth
    p.idle(2000)
    expect(p.keeper.check()).toEqual({ collected: false })
    expect(p.collections).toBe(2)
  })

  it('hands garbage ArrayBuffers back to the system in a real collection', () => {
    // the real RSS and collector; this test process counts as idle (it is busy allocating)
    const keeper = memoryKeeper(
      undefined,
      undefined,
      () => 0,
      () => performance.now(),
    )
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
