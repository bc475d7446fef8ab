import type { Db } from '../db'
import type { Deps } from '../deps'
import type { ChangeDraft } from '../history/model'
import { recordChanges } from '../history/record'
import { type Actor, eventActor } from '../ports/actor'
import type { CommittedEvent } from '../ports/commits'
import type { NodeData } from '../ports/node-data'
import { bumpRevision, revisionAdvanced } from '../revisions/revision'
import { insertMany } from './queries'
import { eventsKey } from './waiters'

/** A node as events carry it (the Node of src/nodes/model.ts; the nodes module writes events, so it is named here by shape). */
export interface EventNode {
  id: string
  /** its revision after this event (live.md, 1) */
  rev?: string
  type: string
  parentId: string | null
  data: NodeData
}

/**
 * Domain events, written to the `events` outbox in the caller's transaction. The payload is
 * exactly the webhook payload of docs/reference/events.md (Events); webhooks, the pull feed and search read it.
 */
export type DomainEvent =
  | { type: 'node.added' | 'node.updated' | 'node.deleted'; node: EventNode; revert?: true }
  | {
      type: 'iteration.added' | 'iteration.updated' | 'iteration.deleted'
      iteration: { name: string; status?: string; previous_name?: string }
    }
  /** a claim taken or ended (docs/agents.md); its fields sit at the top of the payload, beside `event` */
  | { type: 'node.claimed' | 'node.released'; claim: { nodeId: string; agent: string; expiresAt?: string } }
  /** a proposal made, applied, rejected or withdrawn (live.md §5); {proposalId, title} at the top, beside `actor` */
  | {
      type: 'proposal.created' | 'proposal.applied' | 'proposal.rejected' | 'proposal.withdrawn'
      proposal: { proposalId: string; title: string }
    }

/**
 * What a write leaves to be saved, in the order it happened: its events and its changes
 * (history.md, 2). A handler notes them here and saves nothing; the saving step of the write's
 * sequence (src/mutate/sequence.ts) hands them to `save`. A node write's WriteCtx
 * (src/nodes/context.ts) is one.
 */
export interface Outbox {
  projectId: string
  events: DomainEvent[]
  changes: ChangeDraft[]
  /**
   * The write changed what the project's reads return without an event or a change to say so (a
   * claim renewed, a project renamed, iterations reordered, an iteration's tags): its revision is
   * advanced all the same (src/revisions/revision.ts).
   */
  revised?: boolean
  /** a dry run (a proposal's preview, rolled back after): nothing of it is saved */
  dryRun?: boolean
  /**
   * The outboxes of rows of other modules the write wrote (a revert's iteration steps), in the
   * order written: saved before its own events and changes, each in its own statement and as noted.
   */
  beside?: Outbox[]
}

/** An outbox of `projectId` (empty unless given its events and changes), for a handler to note what it wrote. */
export const outboxOf = (projectId: string, events: DomainEvent[] = [], changes: ChangeDraft[] = []): Outbox => ({
  projectId,
  events,
  changes,
})

/**
 * Events a write's sequence adds once its handler has noted its own (src/mutate/sequence.ts
 * `runWrite`, step 7: the claims its work state ended, `node.released`): noted after the
 * handler's, in its outbox, so that they are saved in the same statement and read after them.
 */
export function noteAfter(outbox: Outbox, events: readonly DomainEvent[]): void {
  outbox.events.push(...events)
}

/** What saving uses: the write's transaction (`db`) and the ports its steps call. */
type SaveDeps = Pick<Deps, 'db' | 'now' | 'commits' | 'author' | 'config' | 'waiters'>

/**
 * Save what a write noted in `outbox`, inside its transaction (`deps.db`): a dry run saves
 * nothing; the outboxes it wrote beside its own first (`beside`, each saved as one); then its
 * own, in the steps of `saveOwn`. The one way a write saves: the saving step of the sequence of
 * every write calls it (src/mutate/sequence.ts `runWrite`, once a stale ifRev has been refused),
 * and so do a read that renews its agent's claim (src/work/service.ts `renewForReader`) and the
 * writes Arbor makes by itself (the classify loop). Returns the ids of every change it saved
 * (history.md, 2), in the order saved: those of the outboxes beside first, then its own (none for
 * a dry run).
 */
export async function save(deps: SaveDeps, outbox: Outbox): Promise<number[]> {
  if (outbox.dryRun) return []
  const ids: number[] = []
  for (const other of outbox.beside ?? []) ids.push(...(await save(deps, other)))
  ids.push(...(await saveOwn(deps, outbox)))
  return ids
}

/**
 * An outbox's own events and changes saved (`save`), one step a line in the order they happen;
 * the ids of its changes, in order. Every notification below is queued in the transaction and
 * sent at its commit (src/db), never on a rollback.
 */
async function saveOwn(deps: SaveDeps, outbox: Outbox): Promise<number[]> {
  const { projectId, events, changes } = outbox
  // 1. the revision, advanced now when the write says so (`revised`), or when it records changes
  // without an event (updateIteration of gitTags or sortOrder): then no event's trigger advances
  // it at the commit (migration 0036); once either way
  if (outbox.revised || (events.length === 0 && changes.length > 0)) await bumpRevision(deps.db, projectId)
  // 2. the changes (history's statement) and the events (this module's), neither referring to the
  // other: the two statements go out together (postgres.js pipelines what a transaction sends
  // before its answers come back; PGlite runs them in turn), the changes first. A failure of
  // either fails the write, whose transaction then rolls back both.
  const [ids, inserted] = await Promise.all([
    recordChanges(deps, projectId, changes),
    insertEvents(deps.db, projectId, events, deps.now(), deps.author?.actor),
  ])
  if (inserted.length === 0) return ids
  // 3. this process's revision cache, and every replica's, told on REVISION_CHANNEL that the
  // revision advanced: the events' trigger advances it at the commit (migration 0013)
  await revisionAdvanced(deps.db, projectId)
  // 4. the waiters (held GET /events and canvas polls of every replica) told to read again
  await deps.waiters.signal(deps.db, eventsKey(projectId))
  // 5. PGlite: the events handed to the built-in search, which applies them at the commit
  // without a read (src/search/commits.ts); on PostgreSQL search reads the events table itself
  if (deps.db.kind === 'pglite') await deps.commits.announce(deps.db, projectId, inserted)
  return ids
}

/** An event as the outbox stores it. */
export interface EventInsertRow {
  type: DomainEvent['type']
  payload: Record<string, unknown>
}

/**
 * Write `events` to the outbox in `tx` (the events' statement of `saveOwn`); the rows written,
 * with their seqs, in the events' order (none when there are none).
 */
async function insertEvents(
  tx: Db,
  projectId: string,
  events: DomainEvent[],
  now: Date,
  /** who made the write (history.md, 4); none: Arbor itself */
  by?: Actor,
): Promise<CommittedEvent[]> {
  if (events.length === 0) return []
  const timestamp = now.toISOString()
  const actor = eventActor(by)
  const rows = events.map((e): EventInsertRow => {
    const subject =
      'node' in e
        ? {
            node: {
              id: e.node.id,
              ...(e.node.rev ? { rev: e.node.rev } : {}),
              type: e.node.type,
              parentId: e.node.parentId,
              data: e.node.data,
            },
          }
        : 'claim' in e
          ? e.claim
          : 'proposal' in e
            ? e.proposal
            : { iteration: e.iteration }
    const revert = 'revert' in e && e.revert ? { revert: true } : {}
    return { type: e.type, payload: { event: e.type, project_id: projectId, timestamp, ...subject, actor, ...revert } }
  })
  const seqs = await insertMany(tx, projectId, rows)
  return rows.map((r, i) => ({ seq: seqs[i]!, payload: r.payload }))
}
