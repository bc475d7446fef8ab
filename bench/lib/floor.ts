import { writeFileSync } from 'node:fs'
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
 */
export async function floorOf(url: string, headers: Record<string, string>, tmp: string): Promise<Floor> {
  const res = await fetch(url, { headers })
  const body = new Uint8Array(await res.arrayBuffer())
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${new TextDecoder().decode(body).slice(0, 300)}`)
  const file = join(tmp, `floor-${Math.random().toString(36).slice(2)}.bin`)
  writeFileSync(file, body)
  const proc = Bun.spawn(
    [process.execPath, 'bench/lib/floor-server.ts', file, res.headers.get('content-type') ?? 'application/octet-stream'],
    {
      cwd: ROOT,
      stdout: 'pipe',
      stderr: 'inherit',
    },
  )
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`floor server for ${url} exited before listening`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const { port } = JSON.parse(text.split('\n')[0]!)
  return {
    url: `http://127.0.0.1:${port}/`,
    bytes: body.byteLength,
    stop: async () => {
      proc.kill()
      await proc.exited
    },
  }
}
