/**
 * The one checker of every request's input (docs/validation.md): `checkInput` for a query string
 * or a body (`afterAccess` when it names a project), `parseAction` (also named `parseInput`) for
 * POST /mutate's action bodies (src/mutate/model.ts `ACTION_BODIES`), a node's `data` and a
 * workflow's parts.
 *
 * Each schema also carries docs/reference/errors.md's refusal message for its part (the marks of
 * src/ports/schema-rules.ts): `parseAction` checks a body and answers the first broken part with
 * exactly the message and `_tip` the contract expects. Parts marked `deferred` are documented
 * here and checked later: a node's data against its own schema once its type is read from the
 * body (src/mutate/check.ts `checkedBody`, with `parseInput`), a parent or a sent id by the
 * node rules, which read the database.
 *
 * Every refusal it gives is one of ours (src/errors.ts `Refused`), worded here, whichever door:
 * the error plugin draws it as it draws a service's. `trimmedName` is the one rule of a name's
 * length after trimming, run by the handlers (docs/validation.md says why not by the schema).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { ErrorListError, prefixed, projectAccessDenied } from '../errors'
import {
  DEFERRED,
  DISCRIMINATOR,
  deferred,
  discriminated,
  IN_VALUE_ORDER,
  NULLABLE,
  nullable,
  PREFIX_ITEMS,
  REFINED,
  REFINED_RULE,
  type Refusal,
  RULE,
  type Rule,
  refined,
  ruled,
  UNKNOWN_FIRST,
} from '../ports/schema-rules'
import { misspeltKeyTip } from './closest-name'
import { TYPED } from './query'

/** A schema as the checker below reads it: TypeBox's JSON Schema and the marks of ports/schema-rules.ts. */
type Marked = TSchema & {
  [RULE]?: Rule
  [DEFERRED]?: true
  [DISCRIMINATOR]?: string
  [PREFIX_ITEMS]?: string
  [REFINED]?: (value: unknown) => boolean
  [REFINED_RULE]?: Rule
  [NULLABLE]?: true
  [IN_VALUE_ORDER]?: true
  [UNKNOWN_FIRST]?: true
  type?: string
  format?: string
  anyOf?: Marked[]
  properties?: Record<string, Marked>
  required?: string[]
  additionalProperties?: unknown
  items?: Marked
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
}

export { deferred, discriminated, nullable, PREFIX_ITEMS, refined, ruled }

/**
 * A whole number from `min` to `max` written in a query string, read as Number() reads it (' 5', '5.0' and '1e1' count)
 * unless `pattern` asks for a stricter writing; OpenAPI documents it as the integer it must be (TYPED).
 */
export const IntegerText = (min: number, max: number, rule: Rule, description?: string, pattern?: string) =>
  refined(
    ruled(Type.String({ description, ...(pattern ? { pattern } : {}), [TYPED]: Type.Integer({ minimum: min, maximum: max }) }), rule),
    (text) => {
      const n = Number(text)
      return Number.isInteger(n) && n >= min && n <= max
    },
  )

/** Does the schema, or a property or item of it, carry a `refined` test (which TypeBox's own check does not run)? */
const refinedInside = (s: Marked): boolean => !!s[REFINED] || refinedBelow(s)
/** (Once per schema: a batch's check asks it of each entry's data schema.) */
const refinedBelow = (s: Marked): boolean => {
  const known = knownOf(s)
  known.refinedBelow ??=
    Object.values(s.properties ?? {}).some(refinedInside) ||
    (!!s.items && refinedInside(s.items)) ||
    (!!s[NULLABLE] && refinedInside(s.anyOf![0]!))
  return known.refinedBelow
}

// ---- the parts every action shares ----

export const ProjectId = ruled(Type.String({ minLength: 1, description: 'the project the action applies to' }), () => projectAccessDenied())
export const IdempotencyKey = Type.Optional(
  ruled(
    Type.String({ minLength: 1, maxLength: 255, description: 'same as the Idempotency-Key header' }),
    'Idempotency-Key must be 1 to 255 characters',
  ),
)
export const NodeId = (rule = 'nodeId is required') => ruled(Type.String({ minLength: 1 }), rule)
export const NonBlank = (rule: string, description?: string) =>
  ruled(Type.String({ pattern: '\\S', ...(description ? { description } : {}) }), rule)

/**
 * A name as stored (a project's, an iteration's): `value` trimmed, or the 400 `tooLong` words when
 * it is over `max` characters after trimming. Its type and non-blankness are its schema's
 * (`NonBlank`); its length is checked by the handler, not the schema, so that what the handler
 * refuses first (a project's tier and owner, an iteration that must exist, a stale `ifRev`) still
 * comes first.
 */
export function trimmedName(value: string, max: number, tooLong: (length: number) => string): string {
  const name = value.trim()
  if (name.length > max) throw new ErrorListError([tooLong(name.length)])
  return name
}

export const action = <A extends string, P extends Record<string, TSchema>>(name: A, properties: P, description: string) =>
  Type.Object({ action: Type.Literal(name), ...properties, idempotencyKey: IdempotencyKey }, { description, title: name })

// ---- checking a body with the contract's messages ----

/**
 * TypeBox's compiled check of `uniqueItems` hashes every item with a BigInt FNV-1a: a batch of
 * 449 blockedBy lists of 50 ids took 240 ms of the event loop, twice. The compiled check runs
 * without the keyword (it stays in the schema, for the documents) and `repeatsInside` tests it
 * with a Set; a repeat found goes the refusal's way, as before.
 */
const withoutUniqueItems = (part: unknown): unknown => {
  if (Array.isArray(part)) return part.map(withoutUniqueItems)
  if (!part || typeof part !== 'object') return part
  const copy: Record<string | symbol, unknown> = { ...(part as Record<string | symbol, unknown>) }
  delete copy.uniqueItems
  for (const key of Object.keys(copy)) copy[key] = withoutUniqueItems(copy[key])
  return copy
}
/** Per schema, once: its compiled validator, whether a `uniqueItems` array sits anywhere in it, whether a refined part sits below it. */
const compiled = new Map<TSchema, { checker?: ReturnType<typeof TypeCompiler.Compile>; unique?: boolean; refinedBelow?: boolean }>()
const knownOf = (schema: TSchema) => {
  let known = compiled.get(schema)
  if (!known) compiled.set(schema, (known = {}))
  return known
}
const checkerOf = (schema: TSchema) => {
  const known = knownOf(schema)
  known.checker ??= TypeCompiler.Compile(withoutUniqueItems(schema) as TSchema)
  return known.checker
}
const distinct = (list: unknown[]) =>
  list.every((v) => typeof v === 'string')
    ? new Set(list).size === list.length
    : new Set(list.map((v) => Value.Hash(v))).size === list.length
/**
 * Does the schema hold a `uniqueItems` array anywhere but in a deferred part? A deferred part is
 * checked later against its own schema (a node's data: src/mutate/check.ts `checkedBody`),
 * where its arrays are tested; here `firstRefusal` would pass it whatever it holds, so a batch's
 * check does not walk its entries' data for repeats.
 */
const uniqueInside = (s: Marked): boolean => {
  const known = knownOf(s)
  known.unique ??=
    !s[DEFERRED] &&
    (!!s.uniqueItems ||
      (!!s.items && uniqueInside(s.items)) ||
      Object.values(s.properties ?? {}).some(uniqueInside) ||
      !!s.anyOf?.some(uniqueInside))
  return known.unique
}
/** Does a `uniqueItems` array inside `value` repeat an item? (Every variant of a union is tried: a false alarm only costs the refusal's walk.) */
const repeatsInside = (s: Marked, value: unknown): boolean => {
  if (!uniqueInside(s)) return false
  if (Array.isArray(value)) {
    if (s.uniqueItems && !distinct(value)) return true
    if (s.items && value.some((v) => repeatsInside(s.items!, v))) return true
  } else if (isObject(value) && s.properties)
    for (const [name, part] of Object.entries(s.properties)) if (Object.hasOwn(value, name) && repeatsInside(part, value[name])) return true
  return !!s.anyOf?.some((variant) => repeatsInside(variant, value))
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

type Fallback = (() => Error) | null

/** The refusal of a part without a message of its own: `checkInput` lists every such part at once (`everyPlainPart`). */
class PlainRefusal extends ErrorListError {}

/** `<path> is required` when the part is missing, else `<path>: <what is wrong>`; the body itself is `body`. */
function plainRefusal(path: string, value: unknown, wrong: () => string): string {
  return value === undefined ? `${path || 'body'} is required` : `${path || 'body'}: ${wrong()}`
}

/** The values a union of literals allows (`tier`: free, strategist, …), or null for any other schema. */
function literalsOf(schema: unknown): string[] | null {
  const anyOf = (schema as { anyOf?: { const?: unknown }[] } | undefined)?.anyOf
  if (!Array.isArray(anyOf) || !anyOf.length || !anyOf.every((v) => v.const !== undefined)) return null
  return anyOf.map((v) => String(v.const))
}

/** What is wrong with the part at `path` that failed `error`, in the words of docs/validation.md's refusal. */
function wrongOf(error: ValueError, path: string): string {
  const values = literalsOf(error.schema)
  if (values) return `must be one of ${values.join(', ')}`
  switch (error.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return `Property '${path}' should not be provided`
    case ValueErrorType.String:
      return `Expected property '${path}' to be string but found: ${error.value}`
    case ValueErrorType.Union:
      return `Property '${path}' should be one of: ${((error.schema as Marked).anyOf ?? []).map((v) => `'${v.format ?? v.type}'`).join(', ')}`
    default:
      return error.message
  }
}

/**
 * The one wording of a failed TypeBox check of a part that has no message of its own, for both
 * doors (`parseAction`'s first broken part, and each part of a `checkInput` refusal, listed by
 * `everyPlainPart`): `error` is TypeBox's, found inside `value`, the part at `at`. The
 * path is the part's followed by the error's own (`a.b[2]`: an array's item in
 * brackets, a property after a dot, a property with an empty name as `""`); the message is
 * `<path> is required` or `<path>: <what is wrong>`.
 */
function partRefusal(at: string, value: unknown, error: ValueError): { path: string; message: string } {
  let path = at
  let inside = value
  for (const raw of error.path.split('/').slice(1)) {
    const name = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(inside)) path = `${path}[${name}]`
    else path = path ? `${path}.${name || '""'}` : name || '""'
    inside = isObject(inside) || Array.isArray(inside) ? (inside as Record<string, unknown>)[name] : undefined
  }
  return { path, message: plainRefusal(path, error.value, () => wrongOf(error, path || 'body')) }
}

function refusalOf(schema: TSchema, value: unknown, path: string, fallback: Fallback = null, rule = (schema as Marked)[RULE]): Error {
  if (rule === undefined && fallback) return fallback()
  const refusal: Refusal = rule === undefined ? plainWords(schema, value, path) : typeof rule === 'function' ? rule(value, path) : rule
  if (refusal instanceof Error) return refusal
  if (rule === undefined) return new PlainRefusal([refusal as string])
  if (typeof refusal === 'string') return new ErrorListError([refusal])
  return new ErrorListError([refusal.message], refusal.tip ? { _tip: refusal.tip } : {})
}

/** The refusal of the part `value` at `path`, broken without a message of its own: its first TypeBox error, worded by `partRefusal`. */
function plainWords(schema: TSchema, value: unknown, path: string): string {
  const first = Value.Errors(schema, value).First()
  return first ? partRefusal(path, value, first).message : plainRefusal(path, value, () => 'invalid value')
}

/** The first broken part of `value`, in the order of the schema's properties, or null. */
function firstRefusal(schema: TSchema, value: unknown, path: string, fallback: Fallback = null): Error | null {
  const s = schema as Marked
  // a part without a message of its own is refused with the message of the nearest part that has one
  const inner: Fallback = s[RULE] !== undefined ? () => refusalOf(schema, value, path) : fallback
  if (s[DEFERRED]) {
    // what is inside is checked later (a node's data with the body, by its type; a parent or an id by the node rules);
    // only a missing or wrongly shaped value is refused here
    const shaped = value !== undefined && (s.type === 'object' ? isObject(value) : s.type !== 'string' || typeof value === 'string')
    return shaped || s[RULE] === undefined ? null : refusalOf(schema, value, path, fallback)
  }
  if (checkerOf(schema).Check(value) && !repeatsInside(s, value)) {
    if (s[REFINED] && !s[REFINED](value)) return refusalOf(schema, value, path, fallback, s[REFINED_RULE] ?? s[RULE])
    if (!refinedBelow(s)) return null
    // an object or array with a refined part: its parts are checked below
  }
  if (s[NULLABLE]) return value === null ? null : firstRefusal(s.anyOf![0]!, value, path, inner)
  if (s[DISCRIMINATOR]) {
    const key = s[DISCRIMINATOR]
    const variant = isObject(value) && s.anyOf ? s.anyOf.find((v) => v.properties?.[key]?.const === value[key]) : undefined
    return variant ? firstRefusal(variant, value, path, fallback) : refusalOf(schema, value, path, fallback)
  }
  if (s.anyOf) {
    if (isObject(value) && s.anyOf.some((v) => v[DEFERRED] && v.type === 'object')) return null
    return refusalOf(schema, value, path, fallback)
  }
  const properties = s.properties
  if (s.type === 'object' && properties) {
    if (!isObject(value)) return refusalOf(schema, value, path, fallback)
    const unknown = s.additionalProperties === false && Object.keys(value).some((k) => !Object.hasOwn(properties, k))
    if (unknown && s[UNKNOWN_FIRST]) return refusalOf(schema, value, path, fallback)
    const names = s[IN_VALUE_ORDER] ? [...new Set([...Object.keys(value), ...Object.keys(properties)])] : Object.keys(properties)
    for (const name of names) {
      const property = Object.hasOwn(properties, name) ? properties[name]! : undefined
      if (!property) {
        if (s.additionalProperties === false) return refusalOf(schema, value, path, fallback)
        continue
      }
      const at = path ? `${path}.${name}` : name
      const present = Object.hasOwn(value, name) && value[name] !== undefined
      if (!present && !s.required?.includes(name)) continue
      const found = firstRefusal(property, present ? value[name] : undefined, at, inner)
      if (found) return found
    }
    return unknown ? refusalOf(schema, value, path, fallback) : null
  }
  if (s.type === 'array' && s.items) {
    const list = value as unknown[]
    if (
      !Array.isArray(list) ||
      (s.minItems !== undefined && list.length < s.minItems) ||
      (s.maxItems !== undefined && list.length > s.maxItems)
    )
      return refusalOf(schema, value, path, fallback)
    for (let i = 0; i < list.length; i++) {
      const found = firstRefusal(s.items, list[i], `${path}[${i}]`, s[PREFIX_ITEMS] ? null : inner)
      if (!found) continue
      return s[PREFIX_ITEMS] ? (prefixed(`${s[PREFIX_ITEMS]}[${i}]`, found) as Error) : found
    }
    return s.uniqueItems ? refusalOf(schema, value, path, fallback) : null
  }
  return refusalOf(schema, value, path, fallback)
}

/**
 * `body` as the typed body of `schema`, or the refusal docs/reference/errors.md gives for its first broken part
 * (thrown: a ErrorListError, or the 403 of a missing projectId). Deferred parts pass through
 * unchecked: a node's data is checked next, by its type (src/mutate/check.ts `checkedBody`), a
 * parent or an id by the node rules.
 */
export function parseAction<S extends TSchema>(schema: S, body: unknown): Static<S> {
  if (checkerOf(schema).Check(body) && !refinedInside(schema) && !repeatsInside(schema, body)) return body as Static<S>
  const refusal = firstRefusal(schema, body, '')
  if (refusal) throw refusal
  return body as Static<S>
}

/** The refusal docs/reference/errors.md gives for `value`'s first broken part, or null when it holds. */
function refusalFor(schema: TSchema, value: unknown): Error | null {
  return checkerOf(schema).Check(value) && !refinedInside(schema) && !repeatsInside(schema, value) ? null : firstRefusal(schema, value, '')
}

/**
 * A value checked against a schema of its own (a node's `data` once its type is known, a revert's
 * filter): typed, or the refusal of its first broken part, as `parseAction` gives it.
 */
export const parseInput = parseAction

/**
 * The one check of a request's input (docs/validation.md): the query string or the body against
 * the route's input schema (`src/<module>/model.ts`), strict, parts checked in the order of the
 * schema's properties. A broken part with a message of its own is refused with it; parts without
 * one (a missing or unknown name, a body that is no JSON object) are refused together
 * (`everyPlainPart`), with the misspelt-key tip.
 */
export function checkInput<S extends TSchema>(where: 'query' | 'body', schema: S, value: unknown): Static<S> {
  const refusal = refusalFor(schema, value)
  if (!refusal) return value as Static<S>
  throw refusal instanceof PlainRefusal ? everyPlainPart(where, schema, value, refusal) : refusal
}

/** The refusal of a body that is no JSON object, sent as JSON (src/http/error-plugin.ts names a body sent otherwise by its Content-Type). */
export const BODY_NOT_AN_OBJECT = 'Request body must be a JSON object (Content-Type: application/json)'

/** At most this many failed checks are read for one refusal (as many as Elysia read when it listed them). */
const MAX_PARTS = 64

/**
 * `checkInput`'s refusal of `value`, whose first broken part (`first`) has no message of its own:
 * every part TypeBox finds broken, one message a part, each worded by `partRefusal` (the body as a
 * whole, when it is no JSON object, as `BODY_NOT_AN_OBJECT`; a property with an empty name as
 * such), and the misspelt-key tip (src/http/closest-name.ts) when a `<name> is required` has a
 * key that looks like its misspelling.
 */
function everyPlainPart(where: 'query' | 'body', schema: TSchema, value: unknown, first: ErrorListError): ErrorListError {
  const seen = new Set<string>()
  const errors: string[] = []
  let whole: number | undefined
  let read = 0
  for (const error of Value.Errors(schema, value)) {
    if (++read > MAX_PARTS) break
    const { path, message } = partRefusal('', value, error)
    if (seen.has(path)) continue // one message per part is enough
    seen.add(path)
    if (path === '') whole = errors.length
    if (path === '' && !isObject(error.value)) errors.push(BODY_NOT_AN_OBJECT)
    else if (path === '""') errors.push('The body has a property with an empty name (""): remove it')
    else errors.push(message)
  }
  // a refined part without a rule of its own, which TypeBox's check does not see
  if (!errors.length) errors.push(...first.errors)
  const tip = misspeltKeyTip(where, value, errors)
  return new ErrorListError(errors, tip ? { _tip: tip } : {}, 400, undefined, where === 'body' ? whole : undefined)
}

/** The query string of a route that takes only the project (GET /members, /share, /webhooks, /export-okf, …). */
export const ProjectQuery = Type.Object({ projectId: Type.String() }, { additionalProperties: false })

/** A body any JSON object passes: for an input its service checks part by part with this checker (POST /workflow, whose refusals carry the run's state). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown())

/**
 * `checkInput` after the caller's access to the project the input names (`access`, which throws
 * the 403 or 404): a caller without access hears that before any 400 about a value. An input
 * without a projectId string names no project to ask about: its schema refuses it first
 * (`projectId is required`, `projectId: Expected property 'projectId' to be string but found: 5`).
 */
export async function afterAccess<A extends object, S extends TSchema>(
  access: (projectId: string) => A | Promise<A>,
  where: 'query' | 'body',
  schema: S,
  value: unknown,
): Promise<A & { input: Static<S> }> {
  const projectId = isObject(value) ? value.projectId : undefined
  if (typeof projectId !== 'string') checkInput(where, schema, value)
  const granted = await access(projectId as string)
  return { ...granted, input: checkInput(where, schema, value) }
}
