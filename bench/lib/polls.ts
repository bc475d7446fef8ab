/**
 * Many open pages of the canvas at once: each keeps one long poll (GET /view/commands with
 * `wait`), asked again as soon as it is answered, as the page does (src/web/client). Raw
 * sockets, one connection per poll: fetch would share a few pooled connections between them.
 */
export interface HeldPolls {
  /** polls sent and not yet answered */
  readonly open: number
  /** answers by status, and how many carried at least one command */
  readonly answers: { byStatus: Record<number, number>; withCommands: number }
  /** Ask no more once the polls under way are answered; resolves when they all are. */
  stop(): Promise<void>
}

export function holdPolls(base: string, key: string, projectId: string, n: number, after: number, revision: string): HeldPolls {
  const url = new URL(base)
  const path = `/api/v1/view/commands?projectId=${encodeURIComponent(projectId)}&after=${after}&wait=15000&revision=${encodeURIComponent(revision)}`
  const request = `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`
  let stopping = false
  let open = 0
  const answers = { byStatus: {} as Record<number, number>, withCommands: 0 }
  const one = () =>
    new Promise<void>((resolve) => {
      let text = ''
      let counted = false
      const done = () => {
        if (counted) return
        counted = true
        open--
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0)
        answers.byStatus[status] = (answers.byStatus[status] ?? 0) + 1
        if (/"commands":\[\{/.test(text)) answers.withCommands++
        resolve()
      }
      open++
      void Bun.connect({
        hostname: url.hostname,
        port: Number(url.port),
        socket: {
          open: (s) => void s.write(request),
          data: (_s, chunk) => {
            text += chunk.toString()
          },
          close: done,
          error: done,
          connectError: done,
        },
      }).catch(done)
    })
  const loops = Array.from({ length: n }, async () => {
    while (!stopping) await one()
  })
  return {
    get open() {
      return open
    },
    answers,
    async stop() {
      stopping = true
      await Promise.all(loops)
    },
  }
}
