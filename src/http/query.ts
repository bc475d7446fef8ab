import type { TSchema } from '@sinclair/typebox'

/**
 * Where a query-string part keeps the typed schema of its value (IntegerText, src/http/action-schema.ts),
 * for the OpenAPI document only: validation ignores the key, and completeOpenApi (./schemas.ts)
 * documents the parameter with the typed schema (its bounds) in place of the string.
 */
export const TYPED = 'x-arbor-typed'

/** A property's description, followed by its allowed values when it is an enumeration. */
export function describe(prop: TSchema): string | undefined {
  const values =
    Array.isArray(prop.anyOf) && prop.anyOf.every((p: TSchema) => 'const' in p) ? prop.anyOf.map((p: TSchema) => p.const) : null
  if (!values) return prop.description
  return prop.description ? `${prop.description}: ${values.join(', ')}` : values.join(', ')
}
