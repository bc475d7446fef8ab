// Webhook attempts run in a worker thread of their own: the HTTP calls, DNS checks and signatures
// of every delivery stay off the thread that serves requests, which only claims deliveries and
// records their outcomes (one statement each per batch). The worker starts with the first batch
// and ends after IDLE_MS with nothing to send; it never keeps the process alive.

import type { SendOutcome, StoredJob, WebhookSender } from '../ports/webhooks'

const IDLE_MS = 30_000

/** The worker's module; in the single executable it sits at its path under src/ (src/binary.ts). */
function workerUrl(): string {
  if (import.meta.url.startsWith('file:///$bunfs/')) return new URL('./webhooks/send-worker.ts', import.meta.url).href
  return new URL('./send-worker.ts', import.meta.url).href
}

export function createWebhookSender(allowInsecure: () => boolean): WebhookSender {
  let worker: Worker | undefined
  let next = 0
  let idle: ReturnType<typeof setTimeout> | undefined
  const pending = new Map<number, { jobs: StoredJob[]; resolve: (o: SendOutcome[]) => void }>()

  const lost = (why: string) => {
    for (const { jobs, resolve } of pending.values()) resolve(jobs.map(() => ({ httpStatus: null, error: why })))
    pending.clear()
    worker?.terminate()
    worker = undefined
  }
  const start = (): Worker => {
    if (worker) return worker
    const w = new Worker(workerUrl())
    w.unref()
    w.onmessage = (event: MessageEvent<{ batch: number; outcomes: SendOutcome[] }>) => {
      const job = pending.get(event.data.batch)
      if (!job) return
      pending.delete(event.data.batch)
      job.resolve(event.data.outcomes)
      if (pending.size === 0) {
        clearTimeout(idle)
        idle = setTimeout(() => pending.size === 0 && lost('the delivery worker was idle'), IDLE_MS)
        idle.unref?.()
      }
    }
    w.onerror = (event) => lost(`the delivery worker failed: ${event.message}`)
    worker = w
    return w
  }

  return {
    send(jobs) {
      if (jobs.length === 0) return Promise.resolve([])
      clearTimeout(idle)
      const w = start()
      const batch = ++next
      return new Promise((resolve) => {
        pending.set(batch, { jobs, resolve })
        // read at every batch: tests and benches turn it on after the app is built
        w.postMessage({ batch, jobs, allowInsecure: allowInsecure() })
      })
    },
    async stop() {
      clearTimeout(idle)
      lost('the server stopped during the attempt')
    },
  }
}
