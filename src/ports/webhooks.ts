// What the webhook sender (src/webhooks/sender.ts, a worker thread) is handed and hands back.

/** What one attempt sends: the delivery id (the same on every attempt), its event and body. */
export interface SendJob {
  id: string
  url: string
  event: string
  secret: string
  body: string
  /** seconds since the epoch, signed into the Standard Webhooks headers */
  timestamp: number
}

/** An attempt as the database hands it over: the event's payload as stored, not yet the body. */
export type StoredJob = Omit<SendJob, 'body'> & { payload: string }

/** How it went: a 2xx has no error. */
export interface SendOutcome {
  httpStatus: number | null
  error: string | null
}

/** Where webhook attempts run: a worker thread of their own, off the thread that serves requests. */
export interface WebhookSender {
  /** Attempt every job; outcomes in the jobs' order. Never rejects: a lost worker is an error outcome. */
  send(jobs: StoredJob[]): Promise<SendOutcome[]>
  /** End the worker (attempts still in flight become error outcomes, retried later). */
  stop(): Promise<void>
}
