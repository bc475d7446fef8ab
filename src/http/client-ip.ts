/** The longest client address kept (an IPv6 address with a zone fits); a longer X-Forwarded-For entry is cut. */
const MAX_IP_CHARS = 64

/**
 * The client address used for rate limiting and logs: the socket's, or with TRUST_PROXY the first
 * X-Forwarded-For entry (docs/http-trust.md: the proxy must overwrite that header, not append to it).
 */
export function clientIp(req: Request, socketIp: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers.get('x-forwarded-for')
    const first = forwarded?.split(',')[0]?.trim()
    if (first) return first.slice(0, MAX_IP_CHARS)
  }
  return socketIp ?? 'unknown'
}
