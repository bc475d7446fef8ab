/**
 * The marks an input schema carries for its refusals: docs/reference/errors.md's message of each part (`ruled`),
 * the tests TypeBox's keywords cannot state (`refined`), and how a part is walked. A leaf that
 * imports nothing of ours, so a schema on any floor (the node fields in ports/node-data.ts) can
 * carry its messages; src/http/action-schema.ts reads them.
 */
import { type SchemaOptions, type Static, type TLiteral, type TSchema, type TUnion, Type } from '@sinclair/typebox'

/** A refusal: a message (`{success:false, errors:[…]}`), with a `_tip`, or an Error of its own. */
export type Refusal = string | { message: string; tip?: string } | Error
/** A part's refusal, or a function of the refused value and its path (`externalRefs[2].url`) giving one. */
export type Rule = Refusal | ((value: unknown, at: string) => Refusal)

export const RULE = Symbol.for('arbor.mutate.rule')
export const DEFERRED = Symbol.for('arbor.mutate.deferred')
export const DISCRIMINATOR = Symbol.for('arbor.mutate.discriminator')
export const PREFIX_ITEMS = Symbol.for('arbor.mutate.prefixItems')
export const REFINED = Symbol.for('arbor.input.refined')
export const REFINED_RULE = Symbol.for('arbor.input.refinedRule')
export const NULLABLE = Symbol.for('arbor.input.nullable')
export const IN_VALUE_ORDER = Symbol.for('arbor.input.inValueOrder')
export const UNKNOWN_FIRST = Symbol.for('arbor.input.unknownFirst')

export const ruled = <T extends TSchema>(schema: T, rule: Rule): T => Object.assign(schema, { [RULE]: rule })
/**
 * Documented, but checked later (a copy: the schema itself stays checkable): a node's data once
 * its type is read from the body (src/mutate/check.ts `checkedBody`), a parent or a sent id by
 * the node rules, which read the database.
 */
export const deferred = <T extends TSchema>(schema: T): T => ({ ...schema, [DEFERRED]: true })
export const discriminated = <T extends TSchema>(schema: T, key: string): T => Object.assign(schema, { [DISCRIMINATOR]: key })
/**
 * A value TypeBox's keywords cannot describe (a number written in a query string, a real
 * calendar date, a body whose parts depend on each other): the part holds when it matches
 * `schema` and `test` says yes. On a whole body, an object's properties, an array's items or
 * inside `nullable`, never inside another union. `rule`, when given, is the refusal of `test`
 * alone (a body's `field needs nodeId`): unlike `ruled`'s, it does not word the refusals of the
 * parts inside, which keep their own.
 */
export const refined = <T extends TSchema>(schema: T, test: (value: Static<T>) => boolean, rule?: Rule): T =>
  Object.assign(schema, { [REFINED]: test as (value: unknown) => boolean }, rule === undefined ? {} : { [REFINED_RULE]: rule })
/** `schema` or null (null clears a field): refused with the rules of `schema`. */
export const nullable = <T extends TSchema>(schema: T) => Object.assign(Type.Union([schema, Type.Null()]), { [NULLABLE]: true as const })
/** An object whose properties are checked in the order the value lists them, unknown ones where they stand. */
export const inValueOrder = <T extends TSchema>(schema: T): T => Object.assign(schema, { [IN_VALUE_ORDER]: true })
/** An object whose unknown properties are refused before its known ones are checked. */
export const unknownFirst = <T extends TSchema>(schema: T): T => Object.assign(schema, { [UNKNOWN_FIRST]: true })
/** One of `values`, typed as a tuple of literals (Elysia reads a union of an array's literals as `never`). */
export const literals = <const V extends readonly string[]>(values: V, options?: SchemaOptions) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as TUnion<{ -readonly [K in keyof V]: TLiteral<V[K]> }>
