/** The client address used for rate limiting and logs. */
export function clientIp(req: Request, socketIp: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers.get('x-forwarded-for')
    const first = forwarded?.split(',')[0]?.trim()
    if (first) return first
  }
  return socketIp ?? 'unknown'
}
