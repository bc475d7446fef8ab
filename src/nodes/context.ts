import type { Deps } from '../deps'
import type { Outbox } from '../events/outbox'
import type { StaleField } from '../history/precondition'
import type { IterationRow } from '../iterations/service'
import type { Node, NodeType } from './model'
import type * as q from './queries'

/**
 * A node write's context: the state it keeps from its first read to its saving (`WriteCtx`),
 * opened by the first of the three steps a node is written in, a file each, which its caller
 * runs in order: read (./read.ts `openCtx`, then the reads), checked (./rules.ts), stored
 * (./write.ts). A type only: no walk of a write enters this file.
 */

/**
 * The state of one write (an action, or a whole batch) inside its transaction: nodes read so
 * far (and those written by earlier batch entries), the project's iterations, new ids handed
 * out, rows waiting to be inserted in one statement, and (as an Outbox) the events and changes
 * saved with them.
 */
export interface WriteCtx extends Outbox {
  deps: Deps
  /** id → node as it stands in this transaction; null: known not to exist */
  nodes: Map<string, Node | null>
  /** the project's iterations by name, read at their first use (`iterationsOf`): a write that needs none reads none */
  iterations?: Promise<Map<string, IterationRow>>
  /** draft id → real id (batch only) */
  drafts: Map<string, string>
  pending: q.InsertRow[]
  tips: string[]
  advisories: Record<string, unknown>[]
  created: { nodes: number; iterations: number }
  idPool: Map<NodeType, { next: number; end: number }>
  /** the ids asked for ahead of their use (`askIds`), in `idPool` once this is done */
  asked?: Promise<void>
  /** approach id → its stored blockedBy, read once per write when a blockedBy is sent (the cycle check) */
  blockers?: Map<string, readonly unknown[]>
  /** set by a batch whose blockedBy can close no cycle (src/nodes/cycle-free.ts): the cycle walk is skipped */
  cycleFree?: boolean
  /**
   * The outboxes of rows of other modules this write wrote (a revert's iteration steps), in the
   * order written: saving saves each in its own statement, before the write's own events and
   * changes and as noted (their events are not a revert's).
   */
  beside: Outbox[]
  /** set while a revert undoes a change: what is written now is recorded as `revert` of it */
  revertOf?: number
  /** a proposal's preview: saving stores no change and emits no event (the transaction is rolled back after) */
  dryRun?: boolean
  /** id → the node as this write first read (and locked) it, before anything of the write changed it: what an ifRev is checked against */
  locked: Map<string, { node: Node; rev: unknown; fieldRevs: Record<string, unknown> }>
  /** the fields of this write's ifRevs that changed since (live.md, 1); any refuses the whole write when it is saved */
  stale: StaleField[]
}
