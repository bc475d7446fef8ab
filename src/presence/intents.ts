import { RefusalError } from '../errors'
import type { Actor } from '../ports/actor'
import type { IntentRow } from './queries'
import { actorKey, heldIntent } from './store'

export type { IntentRow }

/**
 * Edit intents (live.md, 4): a presence with `field` holds that field of that node for its actor.
 * A write by any other actor (another user, or the same user under another agent or via) that
 * sets it is refused with 409 being_edited, unless it says `force:true`; the actor's own writes
 * pass, and so do Arbor's own (no actor). The node update, alone or in a batch, reads the intent
 * with the node it locks (sql/nodes/lock-with-intent.sql: `intentProbe` says what to look for)
 * and refuses with `refuseIfHeld` before anything is written.
 */

/** What an update's intent read looks for: the fields it sets, and who writes (their own intents never hold them). */
export interface IntentProbe {
  fields: string[]
  actorKey: string
}

/** The probe of a write that sets `fields`, or null when no intent can hold it: forced, setting nothing, or Arbor's own write. */
export function intentProbe(fields: string[], actor: Actor | undefined, force: unknown): IntentProbe | null {
  if (force === true || fields.length === 0 || !actor?.userId) return null
  const writer = { userId: actor.userId, userName: actor.userName ?? '', ...(actor.agent ? { agent: actor.agent } : {}), via: actor.via }
  return { fields, actorKey: actorKey(writer) }
}

/** 409 being_edited when another actor's intent (`row`, read with the node) holds a field this write sets. */
export function refuseIfHeld(projectId: string, nodeId: string, row: IntentRow | null): void {
  const held = heldIntent(row)
  if (!held) return
  const who = held.actor.agent ? `${held.actor.agent} (${held.actor.userName})` : held.actor.userName
  throw new RefusalError(409, 'being_edited', {
    message: `${who} is editing ${held.field} of ${nodeId} until ${held.until}`,
    target: { kind: 'node', id: nodeId },
    field: held.field,
    by: { actor: held.actor },
    until: held.until,
    _meta: {
      _tip: `Wait until ${held.actor.userName} leaves the field (GET /api/v1/presence?projectId=${projectId} lists who edits what), or send the write again with force:true to overrule them.`,
    },
  })
}
