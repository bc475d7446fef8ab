import { OptionalKind, type TObject, type TSchema, Type } from '@sinclair/typebox'
import { TYPED } from './query'

/**
 * A read's parameters typed (an integer as an integer, `true`/`false` as a boolean), as OpenAPI
 * and the MCP tools publish them, made from the query-string schema the service checks (its
 * `…Query`, src/<module>/model.ts), so the two cannot drift: the same names, which are required,
 * enumerations, bounds and descriptions. A part whose value is typed otherwise than as its text
 * carries that type under TYPED (IntegerText); the checker's marks (its messages and
 * refinements) are left out, and so are the parameters named in `without`, and with
 * `patterns: false` the text patterns (an MCP tool's, whose list has a token budget: the route
 * checks them anyway).
 */
export function typedParams(query: TObject, { without = [], patterns = true }: { without?: string[]; patterns?: boolean } = {}): TObject {
  const properties: Record<string, TSchema> = {}
  for (const [name, part] of Object.entries(query.properties)) {
    if (without.includes(name)) continue
    // JSON keeps the schema and drops the checker's marks, which are symbols
    const { [TYPED]: typed, pattern, ...text } = JSON.parse(JSON.stringify(part)) as Record<string, unknown>
    const shown: Record<string, unknown> = typed
      ? { ...(typed as object), ...(text.description ? { description: text.description } : {}) }
      : { ...text, ...(patterns && pattern !== undefined ? { pattern } : {}) }
    properties[name] = part[OptionalKind] ? Type.Optional(Type.Unsafe(shown)) : Type.Unsafe(shown)
  }
  return Type.Object(properties)
}
