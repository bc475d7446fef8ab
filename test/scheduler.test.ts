import { describe, expect, it } from 'bun:test'
import { atMostEvery, oneAtATime } from '../src/scheduler'

// The scheduler runs each loop on its interval and again when a write wakes it. A wake-up that
// came while a run was going used to start a second run beside it (Croner's `trigger()` ignores
// `protect`): two search ticks pushed one node's add and delete to Meilisearch out of order.
describe('oneAtATime (src/scheduler.ts)', () => {
  it('never runs twice at once, and runs once more for the calls made while it ran', async () => {
    let active = 0
    let most = 0
    let runs = 0
    const gates: (() => void)[] = []
    const run = oneAtATime(async () => {
      runs++
      active++
      most = Math.max(most, active)
      await new Promise<void>((resolve) => gates.push(resolve))
      active--
    })
    const first = run()
    const during = [run(), run(), run()] // three wake-ups while the first run waits
    expect(runs).toBe(1)
    gates.shift()!()
    await Bun.sleep(1)
    expect(runs).toBe(2) // the three wake-ups became one more run
    gates.shift()!()
    await Promise.all([first, ...during])
    expect(most).toBe(1)
    expect(runs).toBe(2)
  })

  it('starts afresh after a run that threw', async () => {
    let runs = 0
    const run = oneAtATime(async () => {
      runs++
      if (runs === 1) throw new Error('boom')
    })
    await expect(run()).rejects.toThrow('boom')
    await run()
    expect(runs).toBe(2)
  })

  it('tells when no run is going: idle() waits for the one in progress, and never rejects', async () => {
    let finished = false
    const run = oneAtATime(async () => {
      await Bun.sleep(50)
      finished = true
      throw new Error('a failed run is idle too')
    })
    await run.idle() // nothing running yet
    const going = run().catch(() => {})
    await run.idle()
    expect(finished).toBe(true)
    await going
  })
})

// Under a stream of writes every write woke the classifier and the search loop, and on PGlite
// each of those runs took the one connection the next write needed.
describe('atMostEvery (src/scheduler.ts)', () => {
  it('runs the first call at once, folds the calls within the spacing into one run after it', async () => {
    const at: number[] = []
    const wake = atMostEvery(60, () => at.push(performance.now()))
    const t0 = performance.now()
    wake()
    expect(at.length).toBe(1)
    wake()
    wake()
    wake()
    expect(at.length).toBe(1)
    await Bun.sleep(120)
    expect(at.length).toBe(2)
    expect(at[1]! - t0).toBeGreaterThanOrEqual(55)
    await Bun.sleep(80)
    wake() // after a quiet spell: at once again
    expect(at.length).toBe(3)
  })

  it('cancel drops a call put off', async () => {
    let runs = 0
    const wake = atMostEvery(30, () => runs++)
    wake()
    wake()
    wake.cancel()
    await Bun.sleep(60)
    expect(runs).toBe(1)
  })
})
