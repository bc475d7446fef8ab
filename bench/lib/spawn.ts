import { join } from 'node:path'
import type { Subprocess } from 'bun'

const ROOT = join(import.meta.dir, '..', '..')

export interface Spawned {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  /** everything the process wrote so far (stdout and stderr, interleaved per chunk) */
  output: () => string
}

async function drain(stream: ReadableStream<Uint8Array>, sink: string[]) {
  const decoder = new TextDecoder()
  for await (const chunk of stream) sink.push(decoder.decode(chunk, { stream: true }))
}

/**
 * `bun src/main.ts` as its own process, exactly as `npm start` runs it, with `env` added to
 * ours. Resolves once /healthz answers 200; rejects with the process output when it exits
 * first or does not answer within `timeoutMs`.
 */
export async function spawnServer(env: Record<string, string>, timeoutMs = 60_000): Promise<Spawned> {
  const port = env.PORT ?? '3000'
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const chunks: string[] = []
  void drain(proc.stdout, chunks)
  void drain(proc.stderr, chunks)
  const spawned: Spawned = { proc, url: `http://127.0.0.1:${port}`, output: () => chunks.join('') }
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await Bun.sleep(50) // let the pipes deliver the last words
      throw new StartError(`exited with ${proc.exitCode ?? proc.signalCode} before answering /healthz`, spawned.output())
    }
    try {
      const res = await fetch(`${spawned.url}/healthz`)
      if (res.status === 200) return spawned
    } catch {}
    await Bun.sleep(50)
  }
  proc.kill('SIGKILL')
  await proc.exited
  throw new StartError(`no answer on /healthz within ${timeoutMs} ms`, spawned.output())
}

export class StartError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message)
  }
}

/** A TCP port that was free a moment ago. */
export function freePort(): number {
  const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = server.port
  server.stop(true)
  return port
}

/** The owner key a first start printed, and a JSON caller with it: what every bench needs of a fresh server. */
export function ownerClient(server: Spawned) {
  const key = /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(server.output())?.[1]
  if (!key) throw new StartError('no owner key in the output of a first start', server.output())
  const call = async (method: string, path: string, body?: unknown) =>
    (
      await fetch(server.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
    ).json() as Promise<any>
  return { key, call }
}

/** Headless Chromium as CI runs it (Debian's package; the flags a sandboxed machine needs). */
export const CHROMIUM = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
}
