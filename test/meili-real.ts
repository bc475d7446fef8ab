import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'

/**
 * A real Meilisearch server for tests, when one is at hand: `../shared/tools/meilisearch` beside
 * the checkout (as on CI), else the binary MEILI_BIN names. Each start is a fresh database in a
 * temporary directory on a free port. Tests that need it skip with MEILI_SKIP as their reason
 * when neither exists; the product never needs it.
 */
const ROOT = join(import.meta.dir, '..')
export const MEILI_BIN: string | undefined = [join(ROOT, '..', 'shared/tools/meilisearch'), process.env.MEILI_BIN].find(
  (p): p is string => !!p && existsSync(p),
)
export const MEILI_SKIP =
  'no real Meilisearch: neither ../shared/tools/meilisearch nor MEILI_BIN exists (set MEILI_BIN=/path/to/meilisearch)'
if (!MEILI_BIN) console.warn(`skipping the real-Meilisearch tests: ${MEILI_SKIP}`)

export interface RealMeili {
  url: string
  masterKey: string
  /** every line the server wrote */
  output: () => string
  stop: () => Promise<void>
}

/** a port the kernel just gave out and took back (a race with another process is unlikely) */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

export async function startRealMeili(): Promise<RealMeili> {
  if (!MEILI_BIN) throw new Error(MEILI_SKIP)
  const dir = mkdtempSync(join(tmpdir(), 'arbor-meili-'))
  const masterKey = 'arbor-test-master-key-0123456789'
  const port = freePort()
  const proc: Subprocess<'ignore', 'pipe', 'pipe'> = Bun.spawn(
    [
      MEILI_BIN,
      '--db-path',
      join(dir, 'db'),
      '--http-addr',
      `127.0.0.1:${port}`,
      '--master-key',
      masterKey,
      '--no-analytics',
      '--env',
      'development',
    ],
    { cwd: dir, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  )
  const chunks: string[] = []
  for (const stream of [proc.stdout, proc.stderr])
    void (async () => {
      const decoder = new TextDecoder()
      for await (const chunk of stream) chunks.push(decoder.decode(chunk, { stream: true }))
    })()
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM')
    await proc.exited
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 30_000
  for (;;) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`Meilisearch did not answer /health within 30 s:\n${chunks.join('')}`)
    }
    await Bun.sleep(100)
  }
  return { url, masterKey, output: () => chunks.join(''), stop }
}
