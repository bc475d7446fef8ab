// Garbage handed back after a burst of work. JavaScriptCore collects when its own heap grows;
// most of what an import or the embedding of a backlog leaves behind is ArrayBuffers (PGlite's
// copies of result rows, the vectors coming back from the sentence model), which weigh little
// in that decision and can stay for minutes. 50,000 nodes just embedded: 513 MB of RSS before a
// full collection, 387 MB after. A full collection stops the process for 50-100 ms at that
// size, so it runs only after a burst: when RSS stands GROWTH_BYTES above what the last one left.

import type { Deps } from '../deps'
import type { Loop } from '../loop'

export const GROWTH_BYTES = 32 * 1024 * 1024

export interface MemoryKeeper {
  /** Collect when RSS grew by GROWTH_BYTES since the last collection; returns what it did. */
  check(): { collected: false } | { collected: true; beforeBytes: number; afterBytes: number }
}

export function memoryKeeper(rss: () => number = () => process.memoryUsage.rss(), collect: () => void = () => Bun.gc(true)): MemoryKeeper {
  let floor = rss()
  return {
    check() {
      const beforeBytes = rss()
      // RSS may also fall (the allocator returned pages on its own): follow it down
      if (beforeBytes < floor) floor = beforeBytes
      if (beforeBytes - floor < GROWTH_BYTES) return { collected: false }
      collect()
      const afterBytes = rss()
      floor = afterBytes
      return { collected: true, beforeBytes, afterBytes }
    },
  }
}

const keepers = new WeakMap<Deps, MemoryKeeper>()

/** Every 2 s: an import makes 10-20 MB of garbage a batch, several batches a second; a check is one RSS read. */
export const memoryLoop: Loop = {
  name: 'memory',
  everySeconds: () => 2,
  tick: async (deps) => {
    let keeper = keepers.get(deps)
    if (!keeper) keepers.set(deps, (keeper = memoryKeeper()))
    const done = keeper.check()
    if (done.collected)
      deps.log.debug('memory: collected garbage', {
        rssMbBefore: Math.round(done.beforeBytes / 1048576),
        rssMbAfter: Math.round(done.afterBytes / 1048576),
      })
    return done
  },
}
