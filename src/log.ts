import { writeSync } from 'node:fs'

/**
 * Structured logs: one JSON object per line on stdout (warnings and errors on stderr).
 * stdout lines are buffered and written together at most FLUSH_MS after the first of them (or
 * at 64 KB), so a busy server makes one write call per batch of requests instead of one per
 * line (a write per turn of the event loop still cost a quarter of a /healthz answer); warnings and errors go out at once, after what is buffered. `flush` writes what is
 * left (main.ts calls it before exiting; so does the process's exit hook).
 */
export type Level = 'debug' | 'info' | 'warn' | 'error'
export type Logger = Record<Level, (msg: string, fields?: Record<string, unknown>) => void> & {
  /** One line per HTTP request, built without an intermediate object. */
  request(requestId: string, method: string, path: string, status: number, ms: number, ip: string): void
  /** Whether `request` writes anything (level info or lower): a caller may skip what only the line needs. */
  readonly requests: boolean
  /** Write out the buffered lines now, synchronously. */
  flush(): void
}

const ORDER: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }
const FLUSH_AT = 64 * 1024
/** The longest a buffered line waits to be written. */
const FLUSH_MS = 50

let lastMs = 0
let lastIso = ''
/** The ISO time, formatted once per millisecond. */
function isoNow(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}

/** JSON string of `s`; plain strings (the usual case) are quoted without JSON.stringify's scan. */
const SAFE = /^[\w ./:@+,;=~!*()$%'-]*$/
const str = (s: string) => (s.length < 200 && SAFE.test(s) ? `"${s}"` : JSON.stringify(s))

/** API keys (`arb_…`) and webhook secrets (`whsec_…`) anywhere in a line: an error's message or stack may quote a value. */
const SECRET = /\b(arb|whsec)_[0-9A-Za-z+/=_-]{8,}/g
export const redactSecrets = (text: string) => text.replace(SECRET, '$1_[redacted]')

/** On exit the event loop is gone: what is still buffered is written synchronously. */
const atExit = new Set<() => void>()
process.once('exit', () => {
  for (const fn of atExit) fn()
})

export function createLogger(minLevel: Level | 'silent' = 'info'): Logger {
  let buffer = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (!buffer) return
    process.stdout.write(buffer)
    buffer = ''
  }
  const out = (line: string) => {
    buffer += line
    if (buffer.length >= FLUSH_AT) flush()
    else if (!scheduled) {
      scheduled = true
      setTimeout(flush, FLUSH_MS).unref() // the exit hook writes what an exit leaves
    }
  }
  const emit =
    (level: Level) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[level] < ORDER[minLevel]) return
      const line = `${redactSecrets(JSON.stringify({ time: isoNow(), level, msg, ...fields }))}\n`
      if (level === 'warn' || level === 'error') {
        flush()
        process.stderr.write(line)
      } else out(line)
    }
  const requests = ORDER.info >= ORDER[minLevel]
  if (minLevel !== 'silent')
    atExit.add(() => {
      if (buffer) writeSync(1, buffer)
      buffer = ''
    })
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    requests,
    request(requestId, method, path, status, ms, ip) {
      if (!requests) return
      out(
        `{"time":"${isoNow()}","level":"info","msg":"request","requestId":${str(requestId)},"method":${str(method)},"path":${str(path)},"status":${status},"ms":${ms},"ip":${str(ip)}}\n`,
      )
    },
    flush,
  }
}
