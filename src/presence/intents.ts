import type { Db } from '../db'
import { RefusalError } from '../errors'
import type { Actor } from '../ports/actor'
import { intentOn } from './store'

/**
 * Edit intents (live.md, 4): a presence with `field` holds that field of that node for its actor.
 * A write by any other actor (another user, or the same user under another agent or via) that
 * sets it is refused with 409 being_edited, unless it says `force:true`; the actor's own writes
 * pass, and so do Arbor's own (no actor). Called by the node update, alone or in a batch, before
 * anything is written.
 */
export async function checkEditIntent(
  db: Db,
  projectId: string,
  nodeId: string,
  fields: string[],
  actor: Actor | undefined,
  force: unknown,
  now: Date,
): Promise<void> {
  if (force === true || fields.length === 0 || !actor?.userId) return
  const writer = { userId: actor.userId, userName: actor.userName ?? '', ...(actor.agent ? { agent: actor.agent } : {}), via: actor.via }
  const held = await intentOn(db, projectId, nodeId, fields, writer, now)
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
