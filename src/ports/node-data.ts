/**
 * The node fields of docs/reference/resources.md, declared once: `NodeFields` is the TypeBox schema of a node's
 * `data`, each field carrying the node types it is valid on (`on`) and docs/reference/resources.md's refusal
 * messages (src/ports/schema-rules.ts). From it come the type `NodeData`, the field table
 * `FIELDS` (guide, prompts), the schemas of an add's and an update's `data` per node type
 * (`dataSchema`, checked with a write's body, by the type the body names: src/mutate/check.ts
 * `checkedBody`) and their OpenAPI document.
 * It lives on the ports floor because search, events, export and the app read `NodeData`.
 */
import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox'
import { inValueOrder, literals, nullable, refined, ruled, unknownFirst } from './schema-rules'

export const NODE_TYPES = ['goal', 'need', 'approach', 'job', 'task'] as const
export type NodeType = (typeof NODE_TYPES)[number]

export const ENUMS = {
  status: ['done', 'open', 'delivered'],
  maturity: ['mvp', 'releasable'],
  kano: ['must-have', 'incremental', 'performance', 'delighter'],
  size: ['skateboard', 'vespa', 'car', 'truck', 'antonov'],
  approachStatus: ['development', 'validation', 'resolved', 'retired'],
  goalStatus: ['focus', 'later', 'done'],
  kind: ['memo', 'do-it'],
} as const

export const LIMITS = { externalRefs: 50, demand: 25, serves: 5, blockedBy: 50, labelLength: 500, textLength: 20_000 } as const

/** The expected shape of the array fields, sent as `_meta._tip` with their refusals. */
export const SHAPES = {
  externalRefs: 'externalRefs is an array of at most 50 {system, key, url} objects; url starts with https://; no system+key pair twice',
  demand:
    'demand is an array of at most 25 {who, at, revenue?, size?, source?, ask?}; who a non-empty string, at a YYYY-MM-DD date, revenue a number >= 0',
  serves: 'serves is an array of at most 5 distinct ids of existing needs, never the bet’s own parent',
  blockedBy:
    'blockedBy is an array of at most 50 distinct ids of existing approaches, never the approach itself, and no approach may end up blocking itself through others',
} as const

/** "a goal", "an approach": messages name types with the right article. */
export const an = (type: string) => (/^[aeiou]/.test(type) ? 'an ' : 'a ') + type

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/

/** A full RFC 3339 date-time (date, time and zone), and a real instant: no 2026-02-30, no 25:00. */
export function isRfc3339(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const m = RFC3339.exec(value)
  if (!m) return false
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate()
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days && h <= 23 && mi <= 59 && s <= 60 && !Number.isNaN(Date.parse(value))
}

/** A real calendar day written YYYY-MM-DD. */
const isDate = (s: string) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)

const ON = Symbol.for('arbor.nodes.on')
type On = { [ON]: readonly NodeType[] }
/** A field of `data`, valid on the node types `on`. */
const field = <T extends TSchema>(on: readonly NodeType[], schema: T): T & On => Object.assign(schema, { [ON]: on })

const described = (description?: string) => (description ? { description } : {})
const text = (maxLength: number, description?: string) =>
  ruled(Type.String({ maxLength, ...described(description) }), (value, at) =>
    typeof value === 'string' ? `${at} must be at most ${maxLength} characters` : `${at} must be a string`,
  )
const enumOf = <V extends readonly string[]>(values: V, description?: string) =>
  ruled(literals(values, described(description)), (_, at) => `${at} must be one of: ${values.join(', ')}`)
const ids = (name: 'serves' | 'blockedBy', description: string, maxItems?: number) =>
  ruled(Type.Array(Type.String({ minLength: 1 }), { description, ...(maxItems ? { maxItems, uniqueItems: true } : {}) }), (value) => ({
    message:
      !Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')
        ? `${name} must be an array of node ids`
        : maxItems !== undefined && value.length > maxItems
          ? `${name} has ${value.length} ids; at most ${maxItems} are allowed`
          : `${name} must not repeat an id`,
    tip: SHAPES[name],
  }))
/** An array field of objects: its own message when it is not an array, is too long or (`refine`) breaks a rule across entries. */
const list = <T extends TSchema>(name: 'externalRefs' | 'demand', item: T, max: number, repeated?: (value: Static<T>[]) => string | null) =>
  ruled(
    refined(Type.Array(item, { maxItems: max }), (value) => !repeated?.(value)),
    (value) => ({
      message: !Array.isArray(value)
        ? `${name} must be an array`
        : value.length > max
          ? `${name} has ${value.length} entries; at most ${max} are allowed`
          : (repeated?.(value) ?? `${name} is not valid`),
      tip: SHAPES[name],
    }),
  )
/** An entry of such an array: an object of known fields. */
const entry = <T extends TObject>(name: 'externalRefs' | 'demand', schema: T, unknown: (extra: string[]) => string) =>
  ruled(unknownFirst(schema), (value, at) => ({
    message:
      value && typeof value === 'object' && !Array.isArray(value)
        ? `${at} has unknown fields: ${unknown(Object.keys(value).filter((k) => !Object.hasOwn(schema.properties, k)))}`
        : `${at} must be an object`,
    tip: SHAPES[name],
  }))
const withTip = (name: keyof typeof SHAPES, rule: (at: string) => string) => (_: unknown, at: string) => ({
  message: rule(at),
  tip: SHAPES[name],
})

const ExternalRef = Type.Object(
  {
    system: ruled(
      Type.String({ minLength: 1, pattern: '\\S' }),
      withTip('externalRefs', (at) => `${at} is required: a non-empty string`),
    ),
    key: ruled(
      Type.String({ minLength: 1, pattern: '\\S' }),
      withTip('externalRefs', (at) => `${at} is required: a non-empty string`),
    ),
    url: ruled(
      refined(
        Type.String({ pattern: '^https://', description: 'an https:// URL' }),
        (url) => URL.canParse(url) && new URL(url).protocol === 'https:',
      ),
      (value, at) => ({
        message:
          typeof value === 'string' && value.trim() !== '' ? `${at} must be an https:// URL` : `${at} is required: a non-empty string`,
        tip: SHAPES.externalRefs,
      }),
    ),
  },
  { additionalProperties: false },
)
const DemandEntry = Type.Object(
  {
    who: ruled(
      Type.String({ minLength: 1, pattern: '\\S' }),
      withTip('demand', (at) => `${at} is required: a non-empty string`),
    ),
    at: ruled(
      refined(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a YYYY-MM-DD date' }), isDate),
      withTip('demand', (at) => `${at} is required: a YYYY-MM-DD date`),
    ),
    revenue: Type.Optional(
      ruled(
        Type.Number({ minimum: 0 }),
        withTip('demand', (at) => `${at} must be a number >= 0`),
      ),
    ),
    size: Type.Optional(
      ruled(
        Type.String(),
        withTip('demand', (at) => `${at} must be a string`),
      ),
    ),
    source: Type.Optional(
      ruled(
        Type.String(),
        withTip('demand', (at) => `${at} must be a string`),
      ),
    ),
    ask: Type.Optional(
      ruled(
        Type.String(),
        withTip('demand', (at) => `${at} must be a string`),
      ),
    ),
  },
  { additionalProperties: false },
)

/** No system+key pair twice: the refusal of the first entry that repeats one. */
const repeatedRef = (refs: { system: string; key: string }[]) => {
  const seen = new Set<string>()
  const i = refs.findIndex((r) => {
    const pair = `${r.system}\u0000${r.key}`
    return seen.has(pair) || !seen.add(pair)
  })
  return i < 0 ? null : `externalRefs[${i}] repeats system ${refs[i]!.system} with key ${refs[i]!.key}`
}

const ALL = NODE_TYPES
/** The field table of docs/reference/resources.md: each field's schema, the types it is valid on and its messages. */
export const NodeFields = Type.Object({
  label: field(
    ALL,
    ruled(Type.String({ minLength: 1, maxLength: LIMITS.labelLength, pattern: '\\S', description: 'required; trimmed' }), (value) =>
      typeof value === 'string'
        ? value.length > LIMITS.labelLength
          ? `label must be at most ${LIMITS.labelLength} characters`
          : 'label is required: a non-empty string'
        : value === undefined || value === null
          ? 'label is required: a non-empty string'
          : 'label must be a string',
    ),
  ),
  description: Type.Optional(field(ALL, text(LIMITS.textLength))),
  notes: Type.Optional(field(['approach', 'job'], text(LIMITS.textLength, 'excluded from public share views'))),
  iteration: Type.Optional(
    field(['job', 'task'], text(LIMITS.textLength, 'the name of an iteration; a job or task without one lands in Later')),
  ),
  status: Type.Optional(
    field(['job', 'task'], enumOf(ENUMS.status, 'done, or open (stored as absent); delivered is deprecated and means not done yet')),
  ),
  maturity: Type.Optional(field(['job'], enumOf(ENUMS.maturity))),
  measure: Type.Optional(field(['approach'], text(LIMITS.textLength, 'how the bet is judged'))),
  kano: Type.Optional(field(['approach'], enumOf(ENUMS.kano, 'performance is an alias of incremental'))),
  size: Type.Optional(field(['approach'], enumOf(ENUMS.size))),
  approachStatus: Type.Optional(field(['approach'], enumOf(ENUMS.approachStatus))),
  goalStatus: Type.Optional(field(['goal'], enumOf(ENUMS.goalStatus))),
  blockedBy: Type.Optional(
    field(['approach'], ids('blockedBy', 'ids of blocking approaches, never the approach itself, no cycle', LIMITS.blockedBy)),
  ),
  serves: Type.Optional(field(['approach'], ids('serves', 'ids of existing needs, never the bet’s own parent', LIMITS.serves))),
  externalRefs: Type.Optional(
    field(
      ALL,
      list(
        'externalRefs',
        entry('externalRefs', ExternalRef, (extra) => `${extra.join(', ')}; only system, key and url are allowed`),
        LIMITS.externalRefs,
        repeatedRef,
      ),
    ),
  ),
  demand: Type.Optional(
    field(
      ['need'],
      list(
        'demand',
        entry('demand', DemandEntry, (extra) => extra.join(', ')),
        LIMITS.demand,
      ),
    ),
  ),
  kind: Type.Optional(field(['task'], enumOf(ENUMS.kind, 'assigned by classification; never sent on creation'))),
  urgent: Type.Optional(
    field(
      ['task'],
      ruled(Type.Boolean({ description: 'only on a do-it task' }), (_, at) => `${at} must be true or false`),
    ),
  ),
  completedAt: Type.Optional(
    field(
      ['job', 'task'],
      ruled(
        refined(
          Type.String({
            description: 'RFC 3339 with a time zone; set by the service when status becomes done',
            pattern: RFC3339.source,
          }),
          isRfc3339,
        ),
        (_, at) => `${at} must be an RFC 3339 timestamp with a time zone, e.g. 2026-05-01T12:00:00Z`,
      ),
    ),
  ),
})

/** The keywords of a limit (a length, a count, a pattern): checked on write, and raised over time. */
const LIMIT_KEYWORDS = new Set(['maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'minimum'])
type SchemaPart = { [key: string | symbol]: unknown }
function withoutLimits<T extends TSchema>(schema: T): T {
  const visit = (part: unknown): unknown => {
    if (Array.isArray(part)) return part.map(visit)
    if (!part || typeof part !== 'object') return part
    const copy: SchemaPart = { ...(part as SchemaPart) }
    for (const key of Object.keys(copy))
      if (LIMIT_KEYWORDS.has(key)) delete copy[key]
      else copy[key] = visit(copy[key])
    return copy
  }
  return visit(schema) as T
}

/**
 * A node's `data` as answered: the field table's types without its limits, which are checked on
 * write and may have been raised since a row was stored (an answer never fails its schema for that).
 */
export const StoredNodeData = withoutLimits(NodeFields)

/** A node's `data` as stored and answered: every write checks it against NodeFields. */
export type NodeData = Static<typeof NodeFields>
export type FieldName = keyof typeof NodeFields.properties

const FIELD_NAMES = Object.keys(NodeFields.properties) as FieldName[]
const onOf = (name: FieldName) => (NodeFields.properties[name] as TSchema & On)[ON]

/** The field table: which node types may carry each field (the guide and the prompts print it). */
export const FIELDS = Object.fromEntries(FIELD_NAMES.map((name) => [name, { on: onOf(name) }])) as {
  [F in FieldName]: { on: readonly NodeType[] }
}

/** The fields a node type may carry, in the table's order. */
export const fieldsOf = (type: NodeType) => FIELD_NAMES.filter((f) => onOf(f).includes(type))

/**
 * The `data` of an add (`label` required) or an update (PATCH: only the sent fields) of one
 * node type: its own fields, null clearing one; a field of another type, or of none, is
 * refused by name. Fields are checked in the order the client sent them.
 */
function dataOf(type: NodeType, patch: boolean) {
  const own = fieldsOf(type)
  const properties = Object.fromEntries(
    own.map((f) => {
      const schema = NodeFields.properties[f] as TSchema
      return [f, f === 'label' ? (patch ? Type.Optional(schema) : schema) : Type.Optional(nullable(schema))]
    }),
  )
  return inValueOrder(
    ruled(
      Type.Object(properties, {
        additionalProperties: false,
        description: patch
          ? 'PATCH semantics: only the sent fields change; null clears a field; arrays are replaced whole'
          : `the fields of ${an(type)}`,
      }),
      (value) => {
        const name = Object.keys(value as object).find((k) => !own.includes(k as FieldName))!
        return Object.hasOwn(FIELDS, name)
          ? `${name} is not valid on ${an(type)}; it is valid on: ${FIELDS[name as FieldName].on.join(', ')}`
          : `Unknown field ${name}; fields of ${an(type)}: ${own.join(', ')}`
      },
    ),
  )
}

/** The schema of an add's (`'add'`) or an update's (`'update'`) `data` for each node type. */
export const dataSchema = {
  add: Object.fromEntries(NODE_TYPES.map((t) => [t, dataOf(t, false)])) as Record<NodeType, ReturnType<typeof dataOf>>,
  update: Object.fromEntries(NODE_TYPES.map((t) => [t, dataOf(t, true)])) as Record<NodeType, ReturnType<typeof dataOf>>,
}

/** The `data` of an update whatever the type (documentation; a write's body is checked by the node's type, `dataSchema.update`). */
export const NodeDataPatch = Type.Object(
  Object.fromEntries(
    FIELD_NAMES.map((f) => [f, Type.Optional(f === 'label' ? NodeFields.properties.label : nullable(NodeFields.properties[f] as TSchema))]),
  ),
  {
    additionalProperties: false,
    description: 'PATCH semantics: only the sent fields change; null clears a field; arrays are replaced whole',
  },
)
