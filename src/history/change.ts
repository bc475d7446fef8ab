import type { ChangeAction, ChangeDraft, State } from './model'

/**
 * A change as a write notes it, before saving (history.md, 2): the states before and after of one
 * node or iteration and the names of what differs. Built where the write stores its row
 * (src/nodes/write.ts `noteChange`, src/iterations/service.ts, the classify loop) and kept in the
 * write's outbox; ./record.ts stores them when the write is saved (src/events/outbox.ts `save`).
 * Nothing here reads or writes the database.
 */

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** A node's state as a change keeps it. */
export const nodeState = (n: { parentId: string | null; data: Record<string, unknown> }): State => ({ parentId: n.parentId, data: n.data })

/** The names that differ between two node states: `parentId` and the keys of `data`. */
export function nodeFields(before: State | null, after: State | null): string[] {
  const b = before as { parentId?: unknown; data?: Record<string, unknown> } | null
  const a = after as { parentId?: unknown; data?: Record<string, unknown> } | null
  if (!b || !a) return ['parentId', ...Object.keys((a ?? b)?.data ?? {})]
  const out: string[] = []
  if (!same(b.parentId, a.parentId)) out.push('parentId')
  for (const k of new Set([...Object.keys(b.data ?? {}), ...Object.keys(a.data ?? {})])) if (!same(b.data?.[k], a.data?.[k])) out.push(k)
  return out
}

/** The names that differ between two iteration states (or all of one side's). */
export function iterationFields(before: State | null, after: State | null): string[] {
  if (!before || !after) return Object.keys(after ?? before ?? {})
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !same(before[k], after[k]))
}

/** A change of one target, with the names of what differs (`fields`); `revertOf`: the change a revert takes back. */
const change = (
  kind: ChangeDraft['kind'],
  action: ChangeAction,
  target: { id: string; type: string | null },
  before: State | null,
  after: State | null,
  fields: string[],
  revertOf?: number,
): ChangeDraft => ({ action, kind, ...target, before, after, fields, ...(revertOf ? { revertOf } : {}) })

export const nodeChange = (
  action: ChangeAction,
  node: { id: string; type: string },
  before: State | null,
  after: State | null,
  revertOf?: number,
): ChangeDraft => change('node', action, { id: node.id, type: node.type }, before, after, nodeFields(before, after), revertOf)

export const iterationChange = (
  action: ChangeAction,
  name: string,
  before: State | null,
  after: State | null,
  revertOf?: number,
): ChangeDraft => change('iteration', action, { id: name, type: null }, before, after, iterationFields(before, after), revertOf)
