import { connect } from 'node:net'

export interface RawRes {
  status: number
  headers: Record<string, string>
  text: string
  /** the body parsed as JSON, or null when it is not JSON */
  body: any
}

/**
 * One HTTP/1.1 request written byte for byte on a TCP socket: fetch would rewrite the Host header
 * and normalise the path, which is exactly what these tests must control.
 */
export function rawRequest(
  baseUrl: string,
  /** `body` is sent as JSON; `text` as it is, with the caller's content-type */
  opts: { method?: string; target: string; host: string; headers?: Record<string, string>; body?: unknown; text?: string },
): Promise<RawRes> {
  const { port, hostname } = new URL(baseUrl)
  const body = opts.text ?? (opts.body === undefined ? '' : JSON.stringify(opts.body))
  const headers: Record<string, string> = { ...opts.headers, connection: 'close' }
  if (opts.text === undefined && body) headers['content-type'] = 'application/json'
  if (body) headers['content-length'] = String(Buffer.byteLength(body))
  const head = [`${opts.method ?? 'GET'} ${opts.target} HTTP/1.1`, `Host: ${opts.host}`]
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n${body}`))
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const split = raw.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = raw.slice(0, split === -1 ? raw.length : split).split('\r\n')
      const parsed: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        if (colon > 0) parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      let text = split === -1 ? '' : raw.slice(split + 4)
      if (parsed['transfer-encoding'] === 'chunked') text = unchunk(text)
      let json: unknown = null
      try {
        json = JSON.parse(text)
      } catch {
        json = null // not JSON: the test sees body null and the text
      }
      resolve({ status: Number(statusLine?.split(' ')[1]), headers: parsed, text, body: json })
    })
  })
}

function unchunk(text: string): string {
  let out = ''
  let at = 0
  for (;;) {
    const eol = text.indexOf('\r\n', at)
    if (eol === -1) return out
    const size = Number.parseInt(text.slice(at, eol), 16)
    if (!size) return out
    out += text.slice(eol + 2, eol + 2 + size)
    at = eol + 2 + size + 2
  }
}
