import { describe, expect, it } from 'bun:test'
import { GROWTH_BYTES, memoryKeeper, memoryLoop } from '../src/maintenance/memory'
import { loops } from '../src/scheduler'

const MB = 1024 * 1024

describe('the memory loop (src/maintenance/memory.ts)', () => {
  it('collects only once RSS stands GROWTH_BYTES above what the last collection left', () => {
    let rss = 200 * MB
    let collections = 0
    const keeper = memoryKeeper(
      () => rss,
      () => {
        collections++
        rss -= 60 * MB // what the collection handed back
      },
    )
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
    const keeper = memoryKeeper(
      () => rss,
      () => {},
    )
    rss = 150 * MB
    expect(keeper.check()).toEqual({ collected: false })
    rss = 150 * MB + GROWTH_BYTES
    expect(keeper.check().collected).toBe(true)
  })

  it('hands garbage ArrayBuffers back to the system in a real collection', () => {
    const keeper = memoryKeeper()
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
