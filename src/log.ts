/** Structured logs: one JSON object per line on stdout (warnings and errors on stderr). */
export type Level = 'debug' | 'info' | 'warn' | 'error'
export type Logger = Record<Level, (msg: string, fields?: Record<string, unknown>) => void>

const ORDER: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 }

export function createLogger(minLevel: Level | 'silent' = 'info'): Logger {
  const emit =
    (level: Level) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (ORDER[level] < ORDER[minLevel]) return
      const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })
      ;(level === 'warn' || level === 'error' ? process.stderr : process.stdout).write(`${line}\n`)
    }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}
