/** The longest client address kept (an IPv6 address with a zone fits); a longer X-Forwarded-For entry is cut. */
const MAX_IP_CHARS = 64

/**
 * The socket's address, or how to learn it: main.ts passes a function, since asking Bun for it
 * (`server.requestIP`: a system call and a formatted string) cost a cheap request a tenth of its
 * throughput, and behind a proxy the forwarded address is used instead.
 */
export type SocketIp = string | undefined | (() => string | undefined)

/**
 * The client address used for rate limiting and logs: the socket's, or with TRUST_PROXY the first
 * X-Forwarded-For entry (docs/http-trust.md: the proxy must overwrite that header, not append to it).
 */
export function clientIp(req: Request, socketIp: SocketIp, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers.get('x-forwarded-for')
    const first = forwarded?.split(',')[0]?.trim()
    if (first) return first.slice(0, MAX_IP_CHARS)
  }
  return (typeof socketIp === 'function' ? socketIp() : socketIp) ?? 'unknown'
}
