import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { WAKE_SLICE } from '../src/events/waiters'
import { type ServerProcess, startServer } from './process'

/**
 * A wake storm (issue 46, item 7): one write wakes 1,000 held GET /events?wait=60, and the
 * server answers them in slices, so /healthz, asked meanwhile, is answered
 * between them rather than after all of them. Read from the server's own request log, whose
 * lines follow the order in which answers were made. (How long /healthz waits is a timing
 * figure: bench/wake-storm.ts measures it.)
 */
const WAITERS = 1000

describe('waking a thousand held requests', () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it('answers the woken requests in slices, with /healthz answered between them', async () => {
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Storm', id: 'storm' } } })
    // the newest cursor, once nothing more shows after it (the project's creation has no event; a later one would)
    let after = ''
    for (let quiet = 0; quiet < 3; ) {
      const page = await server.call('GET', `/api/v1/events?projectId=storm&limit=500&after=${after}`)
      quiet = page.body.events.length ? 0 : quiet + 1
      after = page.body.nextCursor ?? ''
    }
    const worker = new Worker(new URL('../bench/lib/hold-events-worker.ts', import.meta.url))
    const messages: Record<string, unknown>[] = []
    worker.onmessage = (e) => messages.push(e.data)
    worker.postMessage({
      base: server.url,
      key: server.ownerKey,
      path: `/api/v1/events?projectId=storm&after=${after}&wait=60`,
      n: WAITERS,
    })
    await server.until(async () => messages.some((m) => 'held' in m), 30_000, 'every request sent')
    // every request read and asleep: each answered by the storm logs its line after the marker
    await server.until(
      async () => {
        const before = server.output().length
        await server.call('GET', '/api/v1/projects')
        await Bun.sleep(200)
        return (
          server
            .output()
            .slice(before)
            .split('\n')
            .filter((l) => l.includes('"path":"/api/v1/events"')).length === 0
        )
      },
      30_000,
      'the held requests asleep',
    )
    const mark = server.output().length
    const answered = () => messages.some((m) => 'answered' in m)
    // /healthz asked on 4 connections from a thread of its own, so a busy test thread cannot hold the asking up
    const prober = new Worker(new URL('../bench/lib/healthz-probe-worker.ts', import.meta.url))
    let probed: number[] | undefined
    prober.onmessage = (e) => {
      probed = e.data.times
    }
    prober.postMessage({ base: server.url, connections: 4 })
    await server.until(async () => server.output().slice(mark).includes('"path":"/healthz"'), 10_000, 'the probe under way')
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: 'storm', node: { type: 'goal', data: { label: 'wake up' } } },
    })
    await server.until(async () => answered(), 60_000, 'every held request answered')
    prober.postMessage('stop')
    await server.until(async () => probed, 10_000, 'the probe stopped')
    prober.terminate()
    worker.terminate()
    const result = messages.find((m) => 'answered' in m)
    expect(result).toEqual({ answered: WAITERS, byStatus: { 200: WAITERS }, withEvents: WAITERS })

    // the answers in the order the server made them: E a woken GET /events, H a /healthz
    await server.until(async () => server.output().slice(mark).split('"path":"/api/v1/events"').length > WAITERS, 5000, 'log lines')
    const order = server
      .output()
      .slice(mark)
      .split('\n')
      .map((l) => (l.includes('"path":"/api/v1/events"') ? 'E' : l.includes('"path":"/healthz"') ? 'H' : ''))
      .join('')
    const storm = order.slice(order.indexOf('E'), order.lastIndexOf('E') + 1)
    const between = storm.split('').filter((c) => c === 'H').length
    const longestRun = Math.max(...storm.split('H').map((run) => run.length))
    console.log(`${WAITERS} woken: ${between} /healthz answered among them, longest run of woken answers ${longestRun}`)
    // the server let the woken requests answer a slice at a time, and /healthz was answered
    // between slices (how many depends on when the probe's requests came, so only one is asked for)
    const runs = [
      ...server
        .output()
        .slice(mark)
        .matchAll(/"msg":"woken requests answered in slices","answered":(\d+),"slices":(\d+)/g),
    ]
    const total = (i: number) => runs.reduce((sum, m) => sum + Number(m[i]), 0)
    // most of them in runs of slices, each run no more than WAKE_SLICE a slice; not every one: a
    // request whose read ends after a run has ended starts a run of its own, and a run of one
    // slice is not logged (on a loaded machine, CI at 0b943e0: 992 of 1,000 in logged runs)
    expect(total(1)).toBeGreaterThanOrEqual(WAITERS / 2)
    expect(total(2)).toBeGreaterThanOrEqual(Math.ceil(total(1) / WAKE_SLICE))
    expect(between).toBeGreaterThan(0)
    expect(longestRun).toBeLessThan(WAITERS)
  }, 120_000)
})
