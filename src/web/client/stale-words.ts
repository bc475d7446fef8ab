import type { Refused } from './api.ts'
import type { Ui } from './ctx.ts'
import type { PlanNode } from './model.ts'

/**
 * A write the server refused as stale (live.md, 1: 409 stale_write): someone changed a field of
 * this write since the page read the node. The page takes the node as it is now, says in words
 * who changed what and when with both values, and lets the person keep theirs (the write sent
 * again with the new rev) or take the other. Nothing is lost either way: the refused value stays
 * on screen until the person chooses.
 */
export interface StaleConflict {
  target: { kind: string; id: string }
  field: string
  yours: unknown
  theirs: unknown
  actor: { userName: string | null; agent?: string; via?: string } | null
  at: string | null
}

const FIELD_WORDS: Record<string, string> = { parentId: 'its place', label: 'the label', description: 'the description' }
const fieldWords = (f: string) => FIELD_WORDS[f] ?? f
const shown = (v: unknown) =>
  v === null || v === undefined || v === ''
    ? '(empty)'
    : `“${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v)}”`

/** Who, in words: the agent and its person, or the person. */
export function who(actor: StaleConflict['actor']): string {
  if (!actor) return 'Someone'
  return actor.agent ? `${actor.agent} (an agent of ${actor.userName ?? 'someone'})` : (actor.userName ?? 'Someone')
}

/** One conflict in words: who changed which field of which node, when, to what; and what this page had. */
export function conflictWords(ui: Ui, c: StaleConflict): string {
  const label = c.target.kind === 'iteration' ? `iteration ${c.target.id}` : (ui.plan.nodes.get(c.target.id)?.data.label ?? c.target.id)
  const when = c.at ? ` at ${new Date(c.at).toLocaleTimeString()}` : ''
  // a rename names the node by the label the person typed over, not by the new one
  const what = c.field === 'label' ? `renamed ${c.target.id}` : `changed ${fieldWords(c.field)} of “${label}”`
  return `${who(c.actor)} ${what}${when} to ${shown(c.theirs)}. Yours: ${shown(c.yours)}.`
}

/** The refusal's conflicts, and the targets as they are now taken into the plan; null when `err` is no stale write. */
export function takeStale(ui: Ui, err: unknown): StaleConflict[] | null {
  const refused = err as Refused
  if (refused?.code !== 'stale_write') return null
  // the nodes as they are now (an iteration comes back with the next read of the plan)
  for (const n of (refused.body.current as PlanNode[] | undefined) ?? []) if (n && 'type' in n) ui.plan.upsert(n)
  return (refused.body.conflicts as StaleConflict[] | undefined) ?? []
}
