/**
 * Who made a write (history.md, 1): the user and key are authoritative; `agent` and `via` are
 * what the caller says about itself, labels to read and filter by, never a permission.
 */
export const VIAS = ['api', 'mcp', 'app', 'workflow', 'cli'] as const
export type Via = (typeof VIAS)[number]

export interface Actor {
  userId: string | null
  userName: string | null
  keyId: string | null
  agent?: string
  via: Via
}

/** The actor of one request and the id every change of that request shares. */
export interface Author {
  actor: Actor
  requestId: string
  /** set while a proposal is applied (live.md §5): every change this request records names it and its author */
  proposal?: { proposalId: string; actor: Actor }
}

/** The actor of a write Arbor makes by itself (the task classifier): no user, no key. */
export const SYSTEM_ACTOR: Actor = { userId: null, userName: 'Arbor', keyId: null, via: 'api' }

/** The actor as events and webhooks carry it (history.md, 4): no keyId. */
export function eventActor(actor: Actor = SYSTEM_ACTOR) {
  return { userId: actor.userId, userName: actor.userName, ...(actor.agent ? { agent: actor.agent } : {}), via: actor.via }
}
