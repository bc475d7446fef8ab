import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import type { RevKind } from '../ports/rev'
import type { ChangeRow } from './model'
import * as q from './queries'

/**
 * The precondition of a write (live.md, 1: revisions): a write that names the `ifRev` it was
 * based on is refused when a field it sets changed after that rev (a delete: when anything did).
 * The node and iteration writes hand each target here, as it stood when their transaction locked
 * it; a refusal is the 409 `stale_write`, thrown before the write commits so nothing of it stays.
 * The other check of who else is writing, an edit intent, is src/presence/intents.ts
 * `refuseIfHeld`; a rule on a field's value is src/nodes/rules.ts's.
 */

/** A target as its write found it, locked: its stored rev and field revs (sql/migrations/0020-revisions.sql). */
export interface Locked {
  kind: RevKind
  id: string
  /** the stored rev (a bigint as the driver reads it) */
  rev: unknown
  /** field → the stored rev that last changed it, for the fields changed since the row was inserted */
  fieldRevs: Record<string, unknown>
  /** field → its value now (`parentId` and the keys of `data`; an iteration's fields) */
  values: Record<string, unknown>
  /** the target as the API answers it, with its rev */
  current: Record<string, unknown>
}

/**
 * One write's precondition on one target: `seq` the stored rev its ifRev names for that target
 * (src/ports/rev.ts `parseRev`, read by the caller with the target; null: a rev the target never
 * had), `sets` the fields it sets and their values (null: a delete).
 */
export interface Expectation {
  target: Locked
  seq: bigint | null
  sets: Record<string, unknown> | null
}

/** A field the write sets that changed after its ifRev. */
export interface StaleField {
  target: Locked
  field: string
  yours: unknown
  theirs: unknown
  /** the ifRev named no rev this target had: the conflict names the target's latest change */
  unknown: boolean
}

const big = (v: unknown) => BigInt(v as string | number | bigint)

/**
 * The fields of `e` that changed after its ifRev: empty when the write may go ahead. `forgotten`:
 * the changes after ifRev are no longer kept (HISTORY_DAYS), so every field counts as changed.
 */
export function staleFields(e: Expectation, forgotten = false): StaleField[] {
  const { target, seq, sets } = e
  const rev = big(target.rev)
  const unknown = forgotten || seq === null || seq > rev
  const after = (f: string) => target.fieldRevs[f] !== undefined && big(target.fieldRevs[f]) > seq!
  // `*`: the rev the row was inserted with (a restore after a delete changed every field)
  const changedSince = (f: string) => unknown || after(f) || after('*')
  const out = (field: string, yours: unknown): StaleField => ({ target, field, yours, theirs: target.values[field] ?? null, unknown })
  if (sets)
    return Object.keys(sets)
      .filter(changedSince)
      .map((f) => out(f, sets[f] ?? null))
  // a delete: every field changed after ifRev (each with yours null)
  if (!unknown && rev === seq) return []
  const all = [...new Set([...Object.keys(target.values), ...Object.keys(target.fieldRevs).filter((f) => f !== '*')])]
  const changed = all.filter(changedSince)
  const fields = changed.length ? changed : all
  return fields.map((f) => out(f, null))
}

/**
 * staleFields, with live.md's rule for a history that no longer reaches back: when the target
 * changed after ifRev but none of its changes is kept any more, every field counts as changed.
 * The extra read happens only when the target did change after ifRev.
 */
export async function checkExpectation(deps: Pick<Deps, 'db'>, projectId: string, e: Expectation): Promise<StaleField[]> {
  const moved = e.seq !== null && e.seq < big(e.target.rev)
  const forgotten = moved && !(await q.hasChanges(deps.db, projectId, e.target.kind, e.target.id))
  return staleFields(e, forgotten)
}

type Latest = Pick<ChangeRow, 'id' | 'at' | 'user_id' | 'user_name' | 'key_id' | 'agent' | 'via' | 'target_kind' | 'target_id' | 'fields'>

/** How many of the targets' newest changes are read to find who last changed each field. */
const LOOK_BACK = 500

const quoteValue = (v: unknown) => (v === null || v === undefined ? 'nothing' : JSON.stringify(v).slice(0, 80))

/**
 * The 409 of a stale write: each conflict with the latest change of its field (its id, actor and
 * time), the targets as they stand now, and a message and tip a person or a model can act on.
 */
export async function staleWrite(deps: Pick<Deps, 'db'>, projectId: string, stale: StaleField[]): Promise<RefusalError> {
  const ids = [...new Set(stale.map((s) => s.target.id))]
  const rows = await q.latestOfTargets(deps.db, projectId, ids, LOOK_BACK)
  const latestOf = (s: StaleField): Latest | undefined => {
    const own = rows.filter((r) => r.target_kind === s.target.kind && r.target_id === s.target.id)
    return (s.unknown ? undefined : own.find((r) => (r.fields ?? []).includes(s.field))) ?? own[0]
  }
  const conflicts = stale.map((s) => {
    const c = latestOf(s)
    const actor = c
      ? { userId: c.user_id, userName: c.user_name, keyId: c.key_id, ...(c.agent !== null ? { agent: c.agent } : {}), via: c.via }
      : null
    return {
      target: { kind: s.target.kind, id: s.target.id },
      field: s.field,
      yours: s.yours ?? null,
      theirs: s.theirs ?? null,
      changeId: c ? String(c.id) : null,
      actor,
      at: c ? new Date(c.at).toISOString() : null,
    }
  })
  const current = [...new Map(stale.map((s) => [`${s.target.kind}\n${s.target.id}`, s.target.current])).values()]
  const words = conflicts.map((c) => {
    const who = c.actor ? `${c.actor.userName ?? 'Arbor'}${c.actor.agent ? ` (${c.actor.agent})` : ''}` : 'another write'
    return `${c.target.id} ${c.field} was changed by ${who}${c.at ? ` at ${c.at}` : ''} to ${quoteValue(c.theirs)}`
  })
  const revs = current.map((t) => `${String(t.id ?? t.name)}: ifRev "${String(t.rev)}"`).join(', ')
  return new RefusalError(409, 'stale_write', {
    message: `Nothing was written: your write is based on an older revision. ${words.join('; ')}.`,
    conflicts,
    current,
    _meta: {
      _tip: `Merge your change into the current values (current), then send the write again with the new rev (${revs}); to overwrite, send it again with that rev unchanged.`,
    },
  })
}
