/**
 * A real local webhook receiver for tests and benches: records every request with its raw body
 * and answers from a per-path plan (a status code, 'hang' for no answer at all, or 302 to
 * /elsewhere); 200 once the plan is used up.
 */
export interface Received {
  path: string
  headers: Record<string, string>
  body: string
  json: any
  /** performance.now() at receipt */
  at: number
}

export type Answer = number | 'hang'

export function startReceiver() {
  const requests: Received[] = []
  const plans = new Map<string, Answer[]>()
  const delays = new Map<string, number>()
  const hanging: (() => void)[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname
      const body = await req.text()
      let json: any
      try {
        json = JSON.parse(body)
      } catch {}
      requests.push({ path, headers: Object.fromEntries(req.headers), body, json, at: performance.now() })
      if (delays.has(path)) await Bun.sleep(delays.get(path)!)
      const answer = plans.get(path)?.shift() ?? 200
      if (answer === 'hang') return new Promise<Response>((resolve) => hanging.push(() => resolve(new Response('late'))))
      if (answer >= 300 && answer < 400) return new Response(null, { status: answer, headers: { location: '/elsewhere' } })
      return new Response(String(answer), { status: answer })
    },
  })
  return {
    requests,
    port: server.port!,
    url: (path = '/hook') => `http://127.0.0.1:${server.port}${path}`,
    /** the next answers for `path`, in order */
    plan(path: string, ...answers: Answer[]) {
      plans.set(path, [...(plans.get(path) ?? []), ...answers])
    },
    /** answer every request on `path` only after `ms` */
    slow(path: string, ms: number) {
      delays.set(path, ms)
    },
    on: (path: string) => requests.filter((r) => r.path === path),
    close() {
      for (const release of hanging) release()
      server.stop(true)
    },
  }
}

export type Receiver = ReturnType<typeof startReceiver>

/** Wait until `check` returns a truthy value (polling; the work runs in the background), or fail with `what`. */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  ms = 10_000,
): Promise<Exclude<T, null | undefined | false | 0 | ''>> {
  const end = performance.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value as Exclude<T, null | undefined | false | 0 | ''>
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(10)
  }
}
