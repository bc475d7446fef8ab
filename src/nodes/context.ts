import type { Deps } from '../deps'
import type { Outbox } from '../events/outbox'
import type { StaleField } from '../history/precondition'
import type { IterationRow } from '../iterations/service'
import type { Node, NodeType } from './model'
import type * as q from './queries'

/**
 * A node write's context: the state it keeps from its first read to its saving, opened by the
 * first of the three calls a node is written in, a file each, which its caller runs in order:
 * read (./read.ts `openCtx`, then the reads), checked (./rules.ts), stored (./write.ts). Its
 * fields are this module's (src/nodes): a module that holds a node write opened here (the
 * sequence, src/mutate/sequence.ts, to which the node actions' handlers and ./batch.ts `batch`
 * return it; src/mutate/revert.ts, whose write ./undo.ts `undoAll` opens and hands it back for `writeMeta`;
 * a proposal's preview, src/mutate/proposals.ts, which reads its batch's) holds the write as a
 * `WriteCtx`, hands it to the functions of src/nodes and reads what they left in it, but cannot
 * assign a field of it. Types only: no walk of a write enters
 * this file.
 */

/**
 * The state of one write (an action, or a whole batch) inside its transaction: nodes read so
 * far (and those written by earlier batch entries), the project's iterations, new ids handed
 * out, rows waiting to be inserted in one statement, and (as an Outbox) the events and changes
 * saved with them. Taken as this type by the functions of src/nodes that assign one of its
 * fields; every other function, and every module outside src/nodes, takes it as a `WriteCtx`.
 */
export interface WriteState extends Outbox {
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
  /** set for a batch whose blockedBy can close no cycle (./cycle-free.ts `noteCycleFree`): the cycle walk is skipped */
  cycleFree?: boolean
  /**
   * The outboxes of rows of other modules this write wrote (a revert's iteration steps), in the
   * order written: saving saves each in its own statement, before the write's own events and
   * changes and as noted (their events are not a revert's).
   */
  beside: Outbox[]
  /** set while a revert undoes a change: what is written now is recorded as `revert` of it */
  revertOf?: number
  /** set when the write is opened (./read.ts `openCtx`) for a proposal's preview or a revert's dry run: saving stores no change and emits no event (the transaction is rolled back after) */
  dryRun?: boolean
  /** id → the node as this write first read (and locked) it, before anything of the write changed it: what an ifRev is checked against */
  locked: Map<string, { node: Node; rev: unknown; fieldRevs: Record<string, unknown> }>
  /** the fields of this write's ifRevs that changed since (live.md, 1); any refuses the whole write when it is saved */
  stale: StaleField[]
}

/**
 * A node write as it is held outside the functions that assign its fields: the same object as
 * its `WriteState`, every field read-only, so that the compiler refuses an assignment to one
 * (`ctx.dryRun = true`) outside src/nodes. TypeScript lets a `WriteCtx` be passed where a
 * `WriteState` is taken (read-only fields do not change what an object type accepts), so a
 * handler hands its write to those functions as it is. What a field holds (its nodes, its tips,
 * its events) is added to by the functions of src/nodes alone, but for the events the write's
 * sequence notes after the handler's (the claims a write ended: src/events/outbox.ts `noteAfter`).
 * Its maps and arrays are not `ReadonlyMap`/`ReadonlyArray` here: a `WriteCtx` so typed would no
 * longer be taken where a `WriteState` is, and the functions of src/nodes that a handler calls with
 * it (./read.ts `loadNodes`, ./write.ts `storeEntry`, `flush`, ./undo.ts …) add to them.
 */
export type WriteCtx = Readonly<WriteState>
