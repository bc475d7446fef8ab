import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')

export interface Floor {
  url: string
  bytes: number
  stop: () => Promise<void>
}

/**
 * Fetches `url` once from the real server and starts a bare Bun server (bench/lib/floor-server.ts,
 * its own process) answering exactly those bytes with that Content-Type: the floor of that read.
 * With `required`, the floor also does the work every request keeps (reads X-Request-Id, asks
 * the client address, logs a line; see floor-server.ts) and sends the real answer's other
 * headers too. Its stdout goes to a file, as the real server's does in the bench.
 */
export async function floorOf(url: string, headers: Record<string, string>, tmp: string, required = false): Promise<Floor> {
  const res = await fetch(url, { headers })
  const body = new Uint8Array(await res.arrayBuffer())
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body).slice(0, 300)}`)
  const name = `floor-${Math.random().toString(36).slice(2)}`
  const file = join(tmp, `${name}.bin`)
  const out = join(tmp, `${name}.log`)
  writeFileSync(file, body)
  const proc = Bun.spawn(
    [
      process.execPath,
      'bench/lib/floor-server.ts',
      file,
      res.headers.get('content-type') ?? 'application/octet-stream',
      ...(required ? ['required', JSON.stringify(extraHeaders(res.headers))] : []),
    ],
    { cwd: ROOT, stdout: Bun.file(out), stderr: 'inherit' },
  )
  const deadline = Date.now() + 30_000
  let first: string | undefined
  while (!(first = existsSync(out) ? readFileSync(out, 'utf8').split('\n')[0] : undefined)?.startsWith('{"port"')) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`floor server for ${url} did not start listening`)
    await Bun.sleep(20)
  }
  const { port } = JSON.parse(first!)
  return {
    url: `http://127.0.0.1:${port}/`,
    bytes: body.byteLength,
    stop: async () => {
      proc.kill()
      await proc.exited
    },
  }
}

/** The headers of a real answer a required-work floor sends as they are (it makes its own X-Request-Id; Bun adds Date and Content-Length). */
function extraHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of headers) if (!['content-type', 'x-request-id', 'date', 'content-length'].includes(name)) out[name] = value
  return out
}
