/**
 * Rewrites the schemas of the generated OpenAPI document into plain OpenAPI 3.1 (JSON Schema
 * 2020-12) that generators of other languages read (openapi-python-client, Redocly, Spectral):
 *
 * - `nullable: true`, an OpenAPI 3.0 word that @elysiajs/openapi adds beside a type array, goes
 *   (3.1 says `type: [T, 'null']`, which the schema already holds);
 * - Elysia's `t.Integer`/`t.Numeric` (`anyOf` of a string with format integer and default 0, and a
 *   number) becomes the number: JSON bodies carry numbers, and the string's default 0 was no
 *   valid example of anything;
 * - an `anyOf` of string `const`s becomes one `enum` (a generator makes one enum type of it,
 *   where it would try each literal in turn);
 * - titles are unique in the document (uniqueTitles), so a generator names one class per schema
 *   instead of dropping the operation whose union reuses a title.
 */
export function portableSchemas(doc: unknown): void {
  walk(doc)
}

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => !!value && typeof value === 'object' && !Array.isArray(value)

/** Elysia's string side of t.Integer / t.Numeric */
const isNumericString = (s: unknown) => isObject(s) && s.type === 'string' && (s.format === 'integer' || s.format === 'numeric')

function walk(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item)
    return
  }
  if (!isObject(node)) return
  if (node.nullable === true) {
    delete node.nullable
    if (typeof node.type === 'string') node.type = [node.type, 'null']
  }
  if (Array.isArray(node.anyOf)) {
    const members = node.anyOf as unknown[]
    // t.Integer: [{type:string, format:integer, default:0}, {type:integer, ...}]
    const number = members.find((m) => isObject(m) && (m.type === 'integer' || m.type === 'number'))
    if (members.length === 2 && members.some(isNumericString) && isObject(number)) {
      delete node.anyOf
      Object.assign(node, number, { ...pick(node, ['description', 'title']) })
    } else if (
      members.length > 1 &&
      members.every((m) => isObject(m) && typeof m.const === 'string' && Object.keys(m).every((k) => k === 'const' || k === 'type'))
    ) {
      delete node.anyOf
      node.type = 'string'
      node.enum = members.map((m) => (m as Json).const)
    }
  }
  for (const value of Object.values(node)) walk(value)
}

/**
 * Gives each titled schema a title no other schema of the document has: a second schema with the
 * same title and other content (POST /mutate's `delete` answer beside its `delete` action) gets
 * the name of where it stands (`delete (mutate 200)`). Generators name a class after a title.
 */
export function uniqueTitles(schema: unknown, where: string, seen: Map<string, string>): void {
  if (Array.isArray(schema)) {
    for (const item of schema) uniqueTitles(item, where, seen)
    return
  }
  if (!isObject(schema)) return
  for (const value of Object.values(schema)) uniqueTitles(value, where, seen)
  const title = schema.title
  if (typeof title !== 'string') return
  const text = JSON.stringify(schema)
  const known = seen.get(title)
  if (known === undefined) seen.set(title, text)
  else if (known !== text) {
    const renamed = `${title} (${where})`
    schema.title = renamed
    seen.set(renamed, JSON.stringify(schema))
  }
}

const pick = (o: Json, keys: string[]) => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]))
