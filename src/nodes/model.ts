import { Type } from '@sinclair/typebox'
import type { Row } from '../db/port'
import type { NodeData } from '../ports/node-data'

export type { NodeData }

/**
 * The node resource of api.md: types, parent rules and the field table of `data`.
 * Pure rules only; checks that need the database (parents, iterations, referenced ids, the
 * status machine) live in write.ts and take the results of these functions.
 */
export const NODE_TYPES = ['goal', 'need', 'approach', 'job', 'task'] as const
export type NodeType = (typeof NODE_TYPES)[number]

/** GET /nodes parameters, typed; the route takes their query-string form (asQuery). */
export const NodesParams = Type.Object({
  projectId: Type.String(),
  type: Type.Optional(Type.Union(NODE_TYPES.map((n) => Type.Literal(n)))),
  iteration: Type.Optional(Type.String({ description: 'iteration name (jobs and tasks only)' })),
})

export interface Node {
  id: string
  type: NodeType
  parentId: string | null
  data: NodeData
  createdAt?: string
}

/** Which type a parent must have; null: the type has no parent. */
export const PARENT_TYPE: Record<NodeType, NodeType | null> = {
  goal: null,
  need: 'goal',
  approach: 'need',
  job: 'approach',
  task: null,
}

export const ENUMS = {
  status: ['done', 'open', 'delivered'],
  maturity: ['mvp', 'releasable'],
  kano: ['must-have', 'incremental', 'performance', 'delighter'],
  size: ['skateboard', 'vespa', 'car', 'truck', 'antonov'],
  approachStatus: ['development', 'validation', 'resolved', 'retired'],
  goalStatus: ['focus', 'later', 'done'],
  kind: ['memo', 'do-it'],
} as const

type Kind = 'string' | 'enum' | 'ids' | 'externalRefs' | 'demand' | 'boolean' | 'timestamp'

/** The field table of api.md: which types may carry each field, and how it is checked. */
export const FIELDS: Record<string, { on: readonly NodeType[]; kind: Kind }> = {
  label: { on: NODE_TYPES, kind: 'string' },
  description: { on: NODE_TYPES, kind: 'string' },
  notes: { on: ['approach', 'job'], kind: 'string' },
  iteration: { on: ['job', 'task'], kind: 'string' },
  status: { on: ['job', 'task'], kind: 'enum' },
  maturity: { on: ['job'], kind: 'enum' },
  measure: { on: ['approach'], kind: 'string' },
  kano: { on: ['approach'], kind: 'enum' },
  size: { on: ['approach'], kind: 'enum' },
  approachStatus: { on: ['approach'], kind: 'enum' },
  goalStatus: { on: ['goal'], kind: 'enum' },
  blockedBy: { on: ['approach'], kind: 'ids' },
  serves: { on: ['approach'], kind: 'ids' },
  externalRefs: { on: NODE_TYPES, kind: 'externalRefs' },
  demand: { on: ['need'], kind: 'demand' },
  kind: { on: ['task'], kind: 'enum' },
  urgent: { on: ['task'], kind: 'boolean' },
  completedAt: { on: ['job', 'task'], kind: 'timestamp' },
}

export const LIMITS = { externalRefs: 50, demand: 25, serves: 5, blockedBy: 50, labelLength: 500, textLength: 20_000 } as const

export const SHAPES = {
  externalRefs: 'externalRefs is an array of at most 50 {system, key, url} objects; url starts with https://; no system+key pair twice',
  demand:
    'demand is an array of at most 25 {who, at, revenue?, size?, source?, ask?}; who a non-empty string, at a YYYY-MM-DD date, revenue a number >= 0',
  serves: 'serves is an array of at most 5 distinct ids of existing needs, never the bet’s own parent',
  blockedBy:
    'blockedBy is an array of at most 50 distinct ids of existing approaches, never the approach itself, and no approach may end up blocking itself through others',
} as const

export class FieldError extends Error {
  constructor(
    message: string,
    readonly tip?: string,
  ) {
    super(message)
  }
}

/** "a goal", "an approach": messages name types with the right article. */
export const an = (type: string) => (/^[aeiou]/.test(type) ? 'an ' : 'a ') + type

const fieldsFor = (type: NodeType) => Object.keys(FIELDS).filter((f) => FIELDS[f]!.on.includes(type))

const isDate = (s: unknown) =>
  typeof s === 'string' &&
  /^\d{4}-\d{2}-\d{2}$/.test(s) &&
  !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) &&
  new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)

function checkExternalRefs(value: unknown): void {
  if (!Array.isArray(value)) throw new FieldError('externalRefs must be an array', SHAPES.externalRefs)
  if (value.length > LIMITS.externalRefs)
    throw new FieldError(`externalRefs has ${value.length} entries; at most ${LIMITS.externalRefs} are allowed`, SHAPES.externalRefs)
  const seen = new Set<string>()
  value.forEach((ref, i) => {
    if (!ref || typeof ref !== 'object' || Array.isArray(ref))
      throw new FieldError(`externalRefs[${i}] must be an object`, SHAPES.externalRefs)
    const extra = Object.keys(ref).filter((k) => !['system', 'key', 'url'].includes(k))
    if (extra.length)
      throw new FieldError(
        `externalRefs[${i}] has unknown fields: ${extra.join(', ')}; only system, key and url are allowed`,
        SHAPES.externalRefs,
      )
    for (const k of ['system', 'key', 'url'])
      if (typeof ref[k] !== 'string' || ref[k].trim() === '')
        throw new FieldError(`externalRefs[${i}].${k} is required: a non-empty string`, SHAPES.externalRefs)
    let ok = false
    try {
      ok = new URL(ref.url).protocol === 'https:'
    } catch {
      // not a URL at all: `ok` stays false and the refusal below names the field
    }
    if (!ok) throw new FieldError(`externalRefs[${i}].url must be an https:// URL`, SHAPES.externalRefs)
    const pair = `${ref.system}\u0000${ref.key}`
    if (seen.has(pair)) throw new FieldError(`externalRefs[${i}] repeats system ${ref.system} with key ${ref.key}`, SHAPES.externalRefs)
    seen.add(pair)
  })
}

function checkDemand(value: unknown): void {
  if (!Array.isArray(value)) throw new FieldError('demand must be an array', SHAPES.demand)
  if (value.length > LIMITS.demand)
    throw new FieldError(`demand has ${value.length} entries; at most ${LIMITS.demand} are allowed`, SHAPES.demand)
  value.forEach((d, i) => {
    if (!d || typeof d !== 'object' || Array.isArray(d)) throw new FieldError(`demand[${i}] must be an object`, SHAPES.demand)
    const extra = Object.keys(d).filter((k) => !['who', 'at', 'revenue', 'size', 'source', 'ask'].includes(k))
    if (extra.length) throw new FieldError(`demand[${i}] has unknown fields: ${extra.join(', ')}`, SHAPES.demand)
    if (typeof d.who !== 'string' || d.who.trim() === '')
      throw new FieldError(`demand[${i}].who is required: a non-empty string`, SHAPES.demand)
    if (!isDate(d.at)) throw new FieldError(`demand[${i}].at is required: a YYYY-MM-DD date`, SHAPES.demand)
    if (d.revenue !== undefined && (typeof d.revenue !== 'number' || !Number.isFinite(d.revenue) || d.revenue < 0))
      throw new FieldError(`demand[${i}].revenue must be a number >= 0`, SHAPES.demand)
    for (const k of ['size', 'source', 'ask'])
      if (d[k] !== undefined && typeof d[k] !== 'string') throw new FieldError(`demand[${i}].${k} must be a string`, SHAPES.demand)
  })
}

function checkIds(field: 'serves' | 'blockedBy', value: unknown): void {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === ''))
    throw new FieldError(`${field} must be an array of node ids`, SHAPES[field])
  if (value.length > LIMITS[field])
    throw new FieldError(`${field} has ${value.length} ids; at most ${LIMITS[field]} are allowed`, SHAPES[field])
  if (new Set(value).size !== value.length) throw new FieldError(`${field} must not repeat an id`, SHAPES[field])
}

/**
 * Check the shape of `data` fields for a node type. `data` may hold nulls (an update clearing
 * a field). Returns nothing; throws FieldError with a message naming the field.
 */
export function checkFields(type: NodeType, data: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(data)) {
    const rule = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined
    if (!rule) throw new FieldError(`Unknown field ${field}; fields of ${an(type)}: ${fieldsFor(type).join(', ')}`)
    if (!rule.on.includes(type)) throw new FieldError(`${field} is not valid on ${an(type)}; it is valid on: ${rule.on.join(', ')}`)
    if (value === null) continue
    switch (rule.kind) {
      case 'string':
        if (typeof value !== 'string') throw new FieldError(`${field} must be a string`)
        if (value.length > (field === 'label' ? LIMITS.labelLength : LIMITS.textLength))
          throw new FieldError(`${field} must be at most ${field === 'label' ? LIMITS.labelLength : LIMITS.textLength} characters`)
        break
      case 'enum': {
        const allowed = ENUMS[field as keyof typeof ENUMS] as readonly string[]
        if (typeof value !== 'string' || !allowed.includes(value)) throw new FieldError(`${field} must be one of: ${allowed.join(', ')}`)
        break
      }
      case 'boolean':
        if (typeof value !== 'boolean') throw new FieldError(`${field} must be true or false`)
        break
      case 'timestamp':
        if (!isRfc3339(value)) throw new FieldError(`${field} must be an RFC 3339 timestamp with a time zone, e.g. 2026-05-01T12:00:00Z`)
        break
      case 'ids':
        checkIds(field as 'serves' | 'blockedBy', value)
        break
      case 'externalRefs':
        checkExternalRefs(value)
        break
      case 'demand':
        checkDemand(value)
        break
    }
  }
  if ('label' in data && (typeof data.label !== 'string' || data.label.trim() === ''))
    throw new FieldError('label is required: a non-empty string')
}

/**
 * The largest number of a node id. An explicit id in a batch moves the id counter (a 32-bit
 * integer) past it, and every id the counter then generates must still parse, or an export
 * could not be loaded back: the bound leaves ~147 million ids of headroom below 2^31.
 */
export const MAX_NODE_NUMBER = 2_000_000_000

/** `<type>-<number>`, the only form of a real node id. */
export function parseNodeId(id: string): { type: NodeType; number: number } | null {
  const m = /^(goal|need|approach|job|task)-([1-9]\d{0,9})$/.exec(id)
  if (!m || Number(m[2]) > MAX_NODE_NUMBER) return null
  return { type: m[1] as NodeType, number: Number(m[2]) }
}

export const isNodeType = (t: unknown): t is NodeType => typeof t === 'string' && (NODE_TYPES as readonly string[]).includes(t)

/** Node row from SQL to the API shape. */
export function toNode(row: Row, withCreatedAt = false): Node {
  const node: Node = { id: row.id, type: row.type, parentId: row.parent_id ?? null, data: row.data }
  if (withCreatedAt) node.createdAt = new Date(row.created_at).toISOString()
  return node
}

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
