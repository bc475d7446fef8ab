// Garbage handed back after a burst of work. JavaScriptCore collects when its own heap grows;
// most of what an import or the embedding of a backlog leaves behind is ArrayBuffers (PGlite's
// copies of result rows, the vectors coming back from the sentence model), which weigh little
// in that decision and can stay for minutes. 50,000 nodes just embedded: 513 MB of RSS before a
// full collection, 387 MB after. A full collection stops the process for 50-100 ms at that
// size, so it runs only after a burst: when RSS stands GROWTH_BYTES above what the last one left
// and the process is no longer busy. While it is (over BUSY_SHARE of a core since the last check:
// an import, a read load), RSS rises and falls with JavaScriptCore's own collections (243-301 MB
// through 30 s of cached reads at 22k req/s), and a forced collection there only stopped the
// answers: one every 4 s, 55-65 ms each (the reads' p99 12-43 ms instead of 10). A busy process
// still collects once RSS stands BUSY_GROWTH_BYTES above the last collection.

import type { Deps } from '../deps'
import type { Loop } from '../loop'

export const GROWTH_BYTES = 32 * 1024 * 1024
/** The growth at which a busy process collects all the same. */
export const BUSY_GROWTH_BYTES = 4 * GROWTH_BYTES
/** Busy: over this share of one core's time spent since the last check. */
export const BUSY_SHARE = 0.5

export interface MemoryKeeper {
  /**
   * Collect when RSS grew by GROWTH_BYTES since the last collection and the process is not busy,
   * or by BUSY_GROWTH_BYTES; returns what it did.
   */
  check(): { collected: false } | { collected: true; beforeBytes: number; afterBytes: number }
}

/** CPU time (user and system) this process has spent, in ms. */
const cpuMsOfProcess = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

export function memoryKeeper(
  rss: () => number = () => process.memoryUsage.rss(),
  collect: () => void = () => Bun.gc(true),
  cpuMs: () => number = cpuMsOfProcess,
  nowMs: () => number = () => performance.now(),
): MemoryKeeper {
  let floor = rss()
  let lastCpu = cpuMs()
  let lastAt = nowMs()
  return {
    check() {
      const beforeBytes = rss()
      const cpu = cpuMs()
      const at = nowMs()
      const busy = at > lastAt && (cpu - lastCpu) / (at - lastAt) > BUSY_SHARE
      lastCpu = cpu
      lastAt = at
      // RSS may also fall (the allocator returned pages on its own): follow it down
      if (beforeBytes < floor) floor = beforeBytes
      if (beforeBytes - floor < (busy ? BUSY_GROWTH_BYTES : GROWTH_BYTES)) return { collected: false }
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
