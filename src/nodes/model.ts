import { type Static, Type } from '@sinclair/typebox'
import type { Row } from '../db/port'
import { NODE_TYPES, type NodeType, StoredNodeData } from '../ports/node-data'
import { formatRev } from '../ports/rev'
import { literals } from '../ports/schema-rules'

export type { NodeData, NodeType } from '../ports/node-data'
export { an, ENUMS, FIELDS, isRfc3339, LIMITS, NODE_TYPES, SHAPES } from '../ports/node-data'

/**
 * The node resource of docs/reference/resources.md: types, parent rules, ids. The field table of `data` (schemas,
 * messages, the types each field is valid on) is NodeFields in src/ports/node-data.ts; checks
 * that need the database (parents, iterations, referenced ids, the status machine) live in rules.ts.
 */

/** A node as the API answers it: every read and write that returns nodes builds on this schema. */
export const NodeOut = Type.Object({
  id: Type.String(),
  rev: Type.String({ description: 'the revision: changes with every committed change of the node; send it back as ifRev (live.md, 1)' }),
  type: literals(NODE_TYPES),
  parentId: Type.Union([Type.String(), Type.Null()]),
  data: StoredNodeData,
  createdAt: Type.Optional(Type.String()),
})
/** rev is in every answer (NodeOut); a node being built inside a write has none until it is stored. */
export type Node = Omit<Static<typeof NodeOut>, 'rev'> & { rev?: string }

/** Which type a parent must have; null: the type has no parent. */
export const PARENT_TYPE: Record<NodeType, NodeType | null> = {
  goal: null,
  need: 'goal',
  approach: 'need',
  job: 'approach',
  task: null,
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
  const node: Node =
    row.rev == null
      ? { id: row.id, type: row.type, parentId: row.parent_id ?? null, data: row.data }
      : { id: row.id, rev: formatRev('node', row.id, row.rev), type: row.type, parentId: row.parent_id ?? null, data: row.data }
  if (withCreatedAt) node.createdAt = new Date(row.created_at).toISOString()
  return node
}
