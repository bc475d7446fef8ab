import { RefusalError } from '../errors'
import type { Actor } from '../ports/actor'
import type { IntentRow } from './queries'
import { actorKey, heldIntent } from './store'

export type { IntentRow }

/**
 * Edit intents (live.md, 4): a presence with `field` holds that field of that node for its actor.
 * A write by any other actor (another user, or the same user under another agent or via) that
 * sets it is refused with 409 being_edited, unless it says `force:true`; the actor's own writes
 * pass, and so do Arbor's own (no actor). The node update, alone or in a batch, reads the live
 * intents on the fields it sets with the node it locks (sql/nodes/lock-with-intent.sql; none looked
 * for with force or for Arbor's own write: src/nodes/read.ts `readUpdate`) and, once its rules
 * passed, refuses with `refuseIfHeld` before anything is written: the one place that says whose
 * intent holds a write.
 */

/**
 * 409 being_edited when an intent of another actor than `writer` (`intents`, read with the node,
 * the latest to end first) holds a field this write sets. Arbor's own write (no user) is held by none.
 */
export function refuseIfHeld(projectId: string, nodeId: string, intents: IntentRow[], writer: Actor | undefined): void {
  if (!writer?.userId) return
  const mine = actorKey({ userId: writer.userId, userName: '', ...(writer.agent ? { agent: writer.agent } : {}), via: writer.via })
  const held = intents.map((row) => heldIntent(row)!).find((h) => actorKey(h.actor) !== mine)
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
