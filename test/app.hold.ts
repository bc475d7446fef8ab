import type { Page } from 'playwright-core'

/**
 * The live stream's word arriving after a write's own answer, made certain: what GET /stream
 * sends, and the long poll's answers, wait in the page while held. On PostgreSQL the stream is
 * woken by LISTEN/NOTIFY, apart from the write's HTTP answer, so on a loaded machine its word can
 * come after the page has read the plan again; holding it reproduces that order every time.
 * Installed before the app's code runs (the page is loaded again), so the app's own fetches go
 * through it; `hold`/`release` switch it.
 */
export async function holdableLive(page: Page) {
  await page.addInitScript(() => {
    const g = globalThis as any
    const gate = { held: false }
    g.__arborLive = gate
    const open = () =>
      new Promise<void>((resolve) => {
        const look = () => (gate.held ? setTimeout(look, 20) : resolve())
        look()
      })
    const realFetch = g.fetch.bind(g)
    g.fetch = async (input: any, init?: any) => {
      const res: Response = await realFetch(input, init)
      const url = String(typeof input === 'string' ? input : input.url)
      if (url.includes('/view/commands?') && !url.includes('wait=0')) {
        await open()
        return res
      }
      if (!url.includes('/stream?') || !res.body) return res
      const reader = res.body.getReader()
      const body = new ReadableStream({
        async pull(ctl) {
          const { value, done } = await reader.read()
          await open()
          if (done) ctl.close()
          else ctl.enqueue(value)
        },
        cancel: (why) => reader.cancel(why),
      })
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
    }
  })
  await page.reload()
  await page.waitForSelector('#tree, .empty-state', { timeout: 60_000 })
  const set = (held: boolean) => page.evaluate((h) => ((globalThis as any).__arborLive.held = h), held)
  return { hold: () => set(true), release: () => set(false) }
}
