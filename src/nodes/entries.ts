/**
 * A batch's entries by the action each names (docs/reference/mutate.md, batch): what an entry
 * sends that the batch reads before or beside applying it, one row per kind in `ENTRY_KINDS`,
 * keyed by the entry's `action` (the discriminant of src/mutate/model.ts `BatchEntry`), as the
 * work state keeps each kind's work in src/work/service.ts `ENTRY_WORK`.
 *
 * Who asks: the batch's ids (./batch-ids.ts: the node an add adds), its cycle check
 * (./cycle-free.ts: the node an entry writes and its blockedBy), its order and advisories
 * (./batch.ts), its cost on PGlite (src/mutate/cost-limit.ts: the data an entry sends;
 * the cost of each kind is `COST_US`, keyed by the same actions), and a proposal's base revs
 * (src/mutate/proposals.ts: the existing node an entry changes, and what it sets). How an entry
 * is read, checked and stored is the `switch` of ./read.ts `readEntry`, ./rules.ts `checkEntry`
 * and ./write.ts `storeEntry` (an addIteration entry: ./write.ts `storeIteration`).
 *
 * A new kind of entry fails tsc until every place handles it: `SentEntry` takes no entry of
 * another action (./batch.ts hands it the batch's `BatchEntry`s), this table lacks its
 * row, `COST_US` its cost, `ENTRY_WORK` its work, and those three `switch`es their case.
 */

/** A batch's entry as far as this table reads it: an entry of src/mutate/model.ts `BatchEntry`, its fields as sent (the node rules say what they may be). */
export type SentEntry =
  | { action: 'add'; node: { id?: unknown; type?: unknown; parentId?: unknown; data?: unknown } }
  | { action: 'update'; nodeId?: unknown; parentId?: unknown; data?: Record<string, unknown> | null }
  | { action: 'delete'; nodeId?: unknown }
  | { action: 'addIteration'; iteration?: unknown }

/** The actions a batch's entry may name. */
export type EntryAction = SentEntry['action']

/** The fields an entry sets on the node it writes: an add's node, an update's entry. */
type FieldsSent = { parentId?: unknown; data?: unknown }

/** What one kind of entry sends, read without allocating (but `changed`, a proposal preview's). */
interface EntryKind<E> {
  /** applied before the other entries: a node may name an iteration the batch creates */
  first: boolean
  /** changes (or deletes) an existing node it names: a proposal checks it against its base rev */
  changes: boolean
  /** the node it adds (its type and the id it was sent under, a draft's too), or none */
  added(e: E): { type?: unknown; id?: unknown } | undefined
  /** the id, as sent, of the node it writes (an add's own id, if sent), or none */
  named(e: E): unknown
  /** the fields it sets on that node (parentId, data: blockedBy, serves), or none */
  fields(e: E): FieldsSent | undefined
  /** what it does to an existing node it names: the fields it sets, null when it deletes it, undefined when it changes none */
  changed(e: E): Record<string, unknown> | null | undefined
}

const none = () => undefined

const ENTRY_KINDS: { [E in SentEntry as E['action']]: EntryKind<E> } = {
  add: { first: false, changes: false, added: (e) => e.node, named: (e) => e.node.id, fields: (e) => e.node, changed: none },
  update: {
    first: false,
    changes: true,
    added: none,
    named: (e) => e.nodeId,
    fields: (e) => e,
    changed: (e) => ({ ...(e.parentId === undefined ? {} : { parentId: e.parentId }), ...(e.data ?? {}) }),
  },
  delete: { first: false, changes: true, added: none, named: (e) => e.nodeId, fields: none, changed: () => null },
  addIteration: { first: true, changes: false, added: none, named: none, fields: none, changed: none },
}

// one cast: tsc cannot tie `ENTRY_KINDS[e.action]` to the member `e` is (a correlated union); the table's type ties them
const kindOf = (e: SentEntry) => ENTRY_KINDS[e.action] as EntryKind<SentEntry>

/** Whether the entry is applied before the others (an addIteration's). */
export const goesFirst = (e: SentEntry): boolean => kindOf(e).first
/** Whether an entry changes (or deletes) an existing node it names (an update's, a delete's). */
export const changesNamed = (e: SentEntry): boolean => kindOf(e).changes
/** The node an entry adds (an add's `node`), or undefined. */
export const addedNode = (e: SentEntry) => kindOf(e).added(e)
/** The id, as sent, of the node an entry writes (an add's `node.id`, an update's or a delete's `nodeId`), or undefined. */
export const namedNode = (e: SentEntry): unknown => kindOf(e).named(e)
/** The fields an entry sets on the node it writes (an add's `node`, an update's entry), or undefined. */
export const fieldsSent = (e: SentEntry): FieldsSent | undefined => kindOf(e).fields(e)
/** What an entry does to the existing node it names: the fields it sets (an update's parentId and data), null (a delete), or undefined (none). */
export const changeSent = (e: SentEntry): Record<string, unknown> | null | undefined => kindOf(e).changed(e)
