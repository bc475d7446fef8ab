import { Kind, OptionalKind, type TObject, type TOptional, type TSchema, type TString, type TUnknown, Type } from '@sinclair/typebox'

/**
 * The query-string form of a typed parameter schema (a model's `…Params`): every value
 * arrives as a string, so each property that is not a string becomes an optional-as-before
 * string with the same description (its enum values listed), and the service parses and
 * checks it with docs/reference/errors.md's messages. Names in `loose` become optional here even when the
 * typed schema requires them (the service answers a missing one with its own message).
 * The typed schema itself is what the MCP tools publish.
 */
export function asQuery(schema: TObject, loose: string[] = []): TObject {
  const properties: Record<string, TSchema> = {}
  for (const [name, prop] of Object.entries(schema.properties)) {
    const text = prop[Kind] === 'String' ? prop : Type.String({ description: describe(prop), [TYPED]: prop })
    const optional = prop[OptionalKind] === 'Optional' || loose.includes(name)
    properties[name] = optional ? Type.Optional(text) : text
  }
  return Type.Object(properties)
}

/**
 * Where a query-string schema keeps the typed schema of its value, for the OpenAPI document only:
 * validation ignores the key, and completeOpenApi (./schemas.ts) documents the parameter with the
 * typed schema (its enum, its bounds) in place of the string.
 */
export const TYPED = 'x-arbor-typed'

/** A query parameter read as text and checked by the service, documented as the typed value it must be. */
export function QueryText(typed: TSchema, description = typed.description): TString {
  return Type.String({ description, [TYPED]: typed })
}

/**
 * The loosely checked form of a typed body schema: every property optional and of any type,
 * with its description, for routes whose service answers each broken field with its own
 * message or error code.
 */
export function asLoose<T extends TObject>(schema: T): TObject<{ [K in keyof T['properties']]: TOptional<TUnknown> }> {
  const properties: Record<string, TSchema> = {}
  for (const [name, prop] of Object.entries(schema.properties))
    properties[name] = Type.Optional(Type.Unknown({ description: describe(prop) }))
  return Type.Object(properties, { additionalProperties: true }) as TObject<{ [K in keyof T['properties']]: TOptional<TUnknown> }>
}

/** A property's description, followed by its allowed values when it is an enumeration. */
export function describe(prop: TSchema): string | undefined {
  const values =
    Array.isArray(prop.anyOf) && prop.anyOf.every((p: TSchema) => 'const' in p) ? prop.anyOf.map((p: TSchema) => p.const) : null
  if (!values) return prop.description
  return prop.description ? `${prop.description}: ${values.join(', ')}` : values.join(', ')
}
