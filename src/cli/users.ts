import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { STATUSES, TIERS } from '../accounts/model'
import { checkedScope, MAX_SCOPE_PROJECTS, ROLES, ScopeSchema } from '../accounts/scope'
import { mintKeyOffline } from '../accounts/service'
import type { Config } from '../config'
import { openDbAsIs } from '../db'
import { DataDirLockedError } from '../db/data-dir-lock'
import type { Db } from '../db/port'
import { ErrorListError } from '../errors'
import { parseAction } from '../http/action-schema'
import { bool, CliError, parse, URL_OPTION, UsageError } from './args'
import { adminServer } from './server-api'

/**
 * `arbor user add|list|set` and `arbor key create|revoke`: the admin API of the running server.
 * `arbor key mint`: straight on the database, for when no key (and no ADMIN_TOKEN) is left.
 */
type User = { id: string; name: string; tier: string; status: string; lapsed: boolean; contributor: boolean }

const describe = (u: User) =>
  `${u.id}  ${u.name}  tier=${u.tier} status=${u.status}${u.lapsed ? ' lapsed' : ''}${u.contributor ? ' contributor' : ''}`

/** A flag that takes one of a few values: anything else is a UsageError that names them. */
const oneOf =
  (flag: string, allowed: readonly string[]) =>
  (raw: string | undefined): string | undefined => {
    if (raw === undefined || allowed.includes(raw)) return raw
    throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}; got ${raw}`)
  }
const tier = oneOf('tier', TIERS)
const status = oneOf('status', STATUSES)

export async function userCommand(config: Config, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv
  if (sub === 'add') {
    const { values, positionals } = parse(
      rest,
      { ...URL_OPTION, tier: { type: 'string' }, status: { type: 'string' }, contributor: { type: 'boolean' } },
      { min: 1, max: 1 },
    )
    const body = { name: positionals[0], tier: tier(values.tier), status: status(values.status), contributor: values.contributor }
    const server = adminServer(config, values.url)
    const { user, apiKey } = await server.call<{ user: User; apiKey: string }>('POST', '/admin/v1/users', body)
    console.log(describe(user))
    console.log(`API key (shown once): ${apiKey}`)
  } else if (sub === 'list') {
    const { values } = parse(rest, { ...URL_OPTION, json: { type: 'boolean' } }, { min: 0, max: 0 })
    const { users } = await adminServer(config, values.url).call<{ users: User[] }>('GET', '/admin/v1/users')
    if (values.json) console.log(JSON.stringify(users, null, 2))
    else for (const u of users) console.log(describe(u))
  } else if (sub === 'set') {
    const { values, positionals } = parse(
      rest,
      {
        ...URL_OPTION,
        name: { type: 'string' },
        tier: { type: 'string' },
        status: { type: 'string' },
        lapsed: { type: 'string' },
        contributor: { type: 'string' },
        'credits-limit': { type: 'string' },
      },
      { min: 1, max: 1 },
    )
    const credits = values['credits-limit']
    if (credits !== undefined && credits !== 'none' && !/^\d+$/.test(credits))
      throw new UsageError(`--credits-limit expects a whole number or none, got ${credits}`)
    const body = {
      name: values.name,
      tier: tier(values.tier),
      status: status(values.status),
      lapsed: bool('lapsed', values.lapsed),
      contributor: bool('contributor', values.contributor),
      creditsLimit: credits === undefined ? undefined : credits === 'none' ? null : Number(credits),
    }
    if (Object.values(body).every((v) => v === undefined)) throw new UsageError('nothing to change: give at least one flag')
    const { user } = await adminServer(config, values.url).call<{ user: User }>(
      'PATCH',
      `/admin/v1/users/${encodeURIComponent(positionals[0]!)}`,
      body,
    )
    console.log(describe(user))
  } else throw new UsageError(sub ? `unknown user command ${sub}` : 'user needs a command: add, list or set')
}

/**
 * `--role R` and `--project ID` (repeated): the key's scope (live.md §6), or none (role write).
 * Checked by ScopeSchema with the one checker, as the admin API and POST /keys check a scope;
 * only the words are the flags'.
 */
function scopeFlags(values: { role?: string; project?: string[] }) {
  if (values.role === undefined && !values.project?.length) return undefined
  const sent = { role: values.role ?? 'write', ...(values.project?.length ? { projects: values.project } : {}) }
  try {
    return checkedScope(parseAction(ScopeSchema, sent))
  } catch (err) {
    if (!(err instanceof ErrorListError)) throw err
    const part = err.errors[0] ?? ''
    if (part.startsWith('role')) throw new UsageError(`--role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(sent.role)})`)
    const item = /^projects\[(\d+)\]/.exec(part)
    if (item)
      throw new UsageError(`--project must be a project id of 1 to 200 characters; got ${JSON.stringify(sent.projects?.[Number(item[1])])}`)
    throw new UsageError(`--project must hold 1 to ${MAX_SCOPE_PROJECTS} project ids (got ${sent.projects?.length ?? 0})`)
  }
}
const SCOPE_OPTIONS = { role: { type: 'string' }, project: { type: 'string', multiple: true } } as const

export async function keyCommand(config: Config, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv
  if (sub === 'create') {
    const { values, positionals } = parse(rest, { ...URL_OPTION, label: { type: 'string' }, ...SCOPE_OPTIONS }, { min: 1, max: 1 })
    const path = `/admin/v1/users/${encodeURIComponent(positionals[0]!)}/api-keys`
    const scope = scopeFlags(values)
    const { apiKey, keyId } = await adminServer(config, values.url).call<{ apiKey: string; keyId: string }>('POST', path, {
      ...(values.label ? { label: values.label } : {}),
      ...(scope ? { scope } : {}),
    })
    console.log(`key ${keyId}`)
    console.log(`API key (shown once): ${apiKey}`)
  } else if (sub === 'scope') {
    // a live key's new scope, through the admin API: it holds at once, on every replica
    const { values, positionals } = parse(rest, { ...URL_OPTION, ...SCOPE_OPTIONS }, { min: 1, max: 1 })
    if (values.role === undefined) throw new UsageError('key scope needs --role (read, propose, work or write)')
    const scope = scopeFlags(values)!
    const path = `/admin/v1/api-keys/${encodeURIComponent(positionals[0]!)}`
    await adminServer(config, values.url).call('PATCH', path, { scope })
    console.log(`key ${positionals[0]}  role=${scope.role}${scope.projects ? ` projects=${scope.projects.join(',')}` : ''}`)
  } else if (sub === 'revoke') {
    const { values, positionals } = parse(rest, URL_OPTION, { min: 1, max: 1 })
    await adminServer(config, values.url).call('DELETE', `/admin/v1/api-keys/${encodeURIComponent(positionals[0]!)}`)
    console.log(`key ${positionals[0]} revoked: it stops working at once`)
  } else if (sub === 'mint') {
    const { values, positionals } = parse(rest, { label: { type: 'string' }, ...SCOPE_OPTIONS }, { min: 1, max: 1 })
    const scope = scopeFlags(values)
    const minted = await onDatabase(config, (db) => mintKeyOffline(db, positionals[0]!, values.label ?? null, scope))
    if ('error' in minted) throw new CliError(minted.error)
    console.log(describe(minted.user))
    console.log(`key ${minted.keyId}${scope ? `  role=${scope.role}${scope.projects ? ` projects=${scope.projects.join(',')}` : ''}` : ''}`)
    console.log(`API key (shown once): ${minted.apiKey}`)
  } else throw new UsageError(sub ? `unknown key command ${sub}` : 'key needs a command: create, mint, scope or revoke')
}

/** The configured database itself (DATABASE_URL, or the embedded one in DATA_DIR), never created here. */
async function onDatabase<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'pgdata', 'PG_VERSION')))
    throw new CliError(`no database in DATA_DIR ${resolve(config.dataDir)}: set DATA_DIR (or DATABASE_URL) to the server's`)
  let db: Db
  try {
    db = await openDbAsIs(config)
  } catch (err) {
    if (err instanceof DataDirLockedError)
      throw new CliError(`${err.message}; or mint through the server: arbor key create USER_ID (with ADMIN_TOKEN)`, 3)
    throw err
  }
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}
