/**
 * `arbor` the command: `npm run arbor -- …`, or the single executable (src/binary.ts). Without
 * a command it serves, as before; an unknown command or flag prints the usage on stderr and
 * exits 2 rather than starting a server (and creating ./data) by surprise.
 */
import pkg from '../../package.json' with { type: 'json' }
import { type Config, loadConfigOrExit } from '../config'
import { sqlState } from '../db/sqlstate'
import { CliError, UsageError } from './args'
import { backupCommand, restoreCommand } from './backup'
import { doctorCommand } from './doctor'
import { healthcheckCommand } from './healthcheck'
import { importCommand } from './import'
import { USAGE } from './usage'
import { keyCommand, userCommand } from './users'

const commands: Record<string, (config: Config, argv: string[]) => Promise<unknown>> = {
  user: userCommand,
  key: keyCommand,
  backup: backupCommand,
  restore: restoreCommand,
  import: importCommand,
  doctor: doctorCommand,
  healthcheck: healthcheckCommand,
}

export async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === 'serve') {
    if (rest.length) return usage(`serve takes no arguments (settings come from the environment): ${rest.join(' ')}`)
    await import('../main')
    return -1 // the server runs until a signal; main exits itself
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(`arbor ${pkg.version}`)
    return 0
  }
  if (command === 'mcp') {
    await import('../mcp/stdio')
    return -1
  }
  const fn = commands[command]
  if (!fn) return usage(`unknown ${command.startsWith('-') ? 'option' : 'command'} ${command}`)
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE)
    return 0
  }
  try {
    const code = await fn(loadConfigOrExit(), rest) // doctor answers its exit status; the others succeed or throw
    return typeof code === 'number' ? code : 0
  } catch (err) {
    if (err instanceof UsageError) return usage(`${command}: ${err.message}`)
    if (err instanceof CliError) {
      console.error(`arbor ${command}: ${err.message}`)
      return err.exitCode
    }
    const unreachable = databaseUnreachable(err)
    if (unreachable) {
      console.error(`arbor ${command}: ${unreachable}`)
      return 1
    }
    throw err
  }
}

/**
 * The operator's words for a DATABASE_URL that cannot be used (nothing listens, no such host, the
 * password or the database refused, the server shutting down), whichever command opened it: one
 * line, not the driver's stack trace. Anything else is a bug and keeps its stack.
 */
function databaseUnreachable(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code
  const state = sqlState(err)
  const refusedBy = state
    ? state.startsWith('08') || state.startsWith('28') || state === '3D000' || state.startsWith('57P') || state === '53300'
    : typeof code === 'string' &&
      [
        'ECONNREFUSED',
        'ENOTFOUND',
        'EAI_AGAIN',
        'ETIMEDOUT',
        'EHOSTUNREACH',
        'ECONNRESET',
        'CONNECT_TIMEOUT',
        'CONNECTION_CLOSED',
      ].includes(code)
  if (!refusedBy) return undefined
  const said = String((err as Error).message ?? err).split('\n')[0]
  return `the database of DATABASE_URL cannot be used: ${said} (${code}); check DATABASE_URL and that PostgreSQL is running`
}

function usage(message: string): number {
  process.stderr.write(`arbor: ${message}\n\n${USAGE}`)
  return 2
}

if (import.meta.main) {
  const code = await run(process.argv.slice(2))
  if (code >= 0) process.exit(code)
}
