import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { afterAccess } from '../http/action-schema'
import { requireProject } from '../projects/access'
import { type ChangeDraft, type ChangeRow, CURSOR, DEFAULT_LIMIT, HistoryQuery } from './model'
import * as q from './queries'

export { type ChangeDraft, type ChangeRow, filterProperties } from './model'

/** What a stored change changed: a node (with its type) or an iteration. */
export const targetOf = (r: ChangeRow) => ({ kind: r.target_kind, id: r.target_id, ...(r.target_type ? { type: r.target_type } : {}) })

/** A change a write would make, as a dry run shows it: a revert's `dryRun`, a proposal's preview. */
export const plannedChange = (d: ChangeDraft) => ({
  target: { kind: d.kind, id: d.id, ...(d.type ? { type: d.type } : {}) },
  action: d.action,
  before: d.before,
  after: d.after,
})

/** A change as GET /history and a revert's answers show it (history.md, 2). */
export function toChange(r: ChangeRow) {
  const actor = { userId: r.user_id, userName: r.user_name, keyId: r.key_id, ...(r.agent !== null ? { agent: r.agent } : {}), via: r.via }
  return {
    changeId: String(r.id),
    at: new Date(r.at).toISOString(),
    actor,
    requestId: r.request_id,
    action: r.action,
    target: targetOf(r),
    before: r.before,
    after: r.after,
    fields: r.fields,
    ...(r.revert_of !== null ? { revertOf: String(r.revert_of) } : {}),
    ...(r.proposal ? { proposal: r.proposal } : {}),
  }
}

/** The filters of a history read or a revert, with nulls for those not given. */
export function filtersOf(f: {
  userId?: string
  agent?: string
  via?: string
  requestId?: string
  since?: string
  until?: string
}): q.Filters {
  return {
    userId: f.userId ?? null,
    agent: f.agent ?? null,
    via: f.via ?? null,
    requestId: f.requestId ?? null,
    since: f.since ? new Date(f.since).toISOString() : null,
    until: f.until ? new Date(f.until).toISOString() : null,
  }
}

const encodeCursor = (id: string | number, snapshot: string) => `${id}.${snapshot}`

/** GET /history: the project's changes, newest first, filtered, a page at a time. */
export async function listHistory(deps: Deps, user: User, raw: Record<string, string | undefined>) {
  const { project, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', HistoryQuery, raw)
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit)
  const m = query.after ? CURSOR.exec(query.after) : null
  const cursor = m ? { below: m[1]!, snapshot: m[2]! } : null
  const rows = await q.list(deps.db, project.id, query.nodeId ?? null, filtersOf(query), cursor, limit)
  const last = rows.at(-1)
  // the snapshot of the first page travels with every cursor after it
  const next = last && rows.length === limit ? encodeCursor(last.id, cursor?.snapshot ?? last.snapshot) : undefined
  const _meta = {
    _tip:
      rows.length === limit
        ? 'More changes wait: call again with after=next.'
        : rows.length
          ? 'That is all. Take back changes with POST /mutate {action:"revert", projectId, changeIds} (dryRun:true first).'
          : 'No change matches these filters.',
  }
  return { changes: rows.map(toChange), ...(next ? { next } : {}), _meta }
}

/** The changes a revert by filter selects: at most `limit`, newest first. */
export const selectByFilter = (deps: Deps, projectId: string, filters: q.Filters, limit: number) =>
  q.list(deps.db, projectId, null, filters, null, limit)
/** The project's changes with these ids, newest first. */
export const changesById = (deps: Deps, projectId: string, ids: number[]) => q.getMany(deps.db, projectId, ids)
/** Every change of these targets newer than `afterId`, oldest first. */
export const laterChanges = (deps: Deps, projectId: string, targetIds: string[], afterId: number) =>
  q.later(deps.db, projectId, targetIds, afterId)

/** The clean-up: changes older than HISTORY_DAYS go (0 keeps them for ever). */
export async function pruneHistory(deps: Pick<Deps, 'db' | 'config' | 'log'>, now: Date): Promise<number> {
  if (deps.config.historyDays === 0) return 0
  const pruned = await q.prune(deps.db, new Date(now.getTime() - deps.config.historyDays * 86_400_000))
  if (pruned) deps.log.info('history pruned', { pruned })
  return pruned
}
