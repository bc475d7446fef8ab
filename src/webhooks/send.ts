// One webhook attempt over HTTP: the receiver's URL checked again (SSRF), both signatures, a POST
// that follows no redirect and waits at most TIMEOUT_MS. Nothing here touches the database or
// the app's dependencies, so it runs in the delivery worker (sender.ts) as well as anywhere else.

import { isIP } from 'node:net'
import { orderPayload } from '../events/payload'
import type { SendJob, SendOutcome, StoredJob } from '../ports/webhooks'
import { deliveryHeaders } from './sign'
import { checkUrl, RefusedUrl } from './ssrf'

export type { SendJob, SendOutcome, StoredJob }

/** docs/reference/limits.md: 5 seconds to answer. */
export const TIMEOUT_MS = 5_000

/**
 * The bodies of a batch of stored jobs: each event's payload parsed and written in docs/reference/events.md's key
 * order once, however many webhooks get it.
 */
export function withBodies(jobs: StoredJob[]): SendJob[] {
  const bodies = new Map<string, string>()
  return jobs.map(({ payload, ...job }) => {
    let body = bodies.get(payload)
    if (body === undefined) bodies.set(payload, (body = JSON.stringify(orderPayload(JSON.parse(payload)))))
    return { ...job, body }
  })
}

/** One HTTP attempt. Never throws: every failure becomes an outcome to record. */
export async function send(job: SendJob, allowInsecure: boolean): Promise<SendOutcome> {
  const done = (httpStatus: number | null, error: string | null): SendOutcome => ({ httpStatus, error })
  let target: Awaited<ReturnType<typeof checkUrl>>
  try {
    // checked again at every attempt: the URL may have been fine at registration and the DNS
    // answer may have changed since (rebinding)
    target = await checkUrl(job.url, allowInsecure)
  } catch (err) {
    if (err instanceof RefusedUrl) return done(null, `${err.message}: ${err.detail}`)
    return done(null, String((err as Error)?.message ?? err))
  }
  const headers: Record<string, string> = deliveryHeaders(job)
  // Connect to the address that was checked, not to whatever the name resolves to a moment
  // later; the Host header and TLS server name keep the original name.
  const url = new URL(target.url)
  let tls: { serverName: string } | undefined
  if (target.address && !isIP(url.hostname.replace(/^\[|\]$/g, ''))) {
    headers.host = url.host
    tls = { serverName: url.hostname.replace(/\.$/, '') }
    url.hostname = isIP(target.address) === 6 ? `[${target.address}]` : target.address
  }
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: job.body,
      redirect: 'manual',
      proxy: false,
      signal: AbortSignal.timeout(TIMEOUT_MS),
      ...(tls ? { tls } : {}),
    } as RequestInit)
    await res.body?.cancel().catch(() => {})
    if (res.status >= 200 && res.status < 300) return done(res.status, null)
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''
    return done(res.status, `HTTP ${res.status}${redirect}`)
  } catch (err) {
    // fetch's timeout and abort are DOMExceptions, known by name
    const { name, message } = (err && typeof err === 'object' ? err : {}) as { name?: unknown; message?: unknown }
    if (name === 'TimeoutError' || name === 'AbortError') return done(null, `no answer within ${TIMEOUT_MS / 1000} s`)
    return done(null, String(message ?? err).slice(0, 500))
  }
}
