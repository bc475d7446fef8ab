import { type ParseArgsConfig, parseArgs } from 'node:util'

/** A command line the CLI cannot read: main prints `message` and the usage on stderr, and exits 2. */
export class UsageError extends Error {}

/** An operation that failed for a reason the operator can fix: main prints it (one line) and exits 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
  }
}

type Options = NonNullable<ParseArgsConfig['options']>

/** The flags and positionals of one command; an unknown flag or a missing value is a UsageError. */
export function parse<O extends Options>(argv: string[], options: O, positionals: { min: number; max: number }) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const n = parsed.positionals.length
  if (n < positionals.min) throw new UsageError('missing argument')
  if (n > positionals.max) throw new UsageError(`unexpected argument ${parsed.positionals[positionals.max]}`)
  return parsed
}

/** The `--url` flag every command that talks to a running server takes. */
export const URL_OPTION = { url: { type: 'string' } } as const

/** A boolean flag's value: true/false, yes/no, 1/0. */
export function bool(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined
  if (/^(1|true|yes|on)$/i.test(raw)) return true
  if (/^(0|false|no|off)$/i.test(raw)) return false
  throw new UsageError(`--${name} expects true or false, got ${raw}`)
}
