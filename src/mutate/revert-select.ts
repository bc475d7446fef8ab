import type { Deps } from '../deps'
import { invalid, notFound } from '../errors'
import { MAX_REVERT, type RevertBody, type RevertFilter } from '../history/model'
import { type ChangeRow, changesById, filtersOf, selectByFilter } from '../history/service'
import type { AccessRow } from '../projects/service'
import { checkRevertCost } from './cost-limit'

/*
 * The changes a revert takes back (history.md, 3), selected and weighed before anything of the
 * write is locked: the revert row's `prepare` (step 4 of src/mutate/sequence.ts `runWrite`), on
 * both databases, whose answer the handler, ./revert.ts `revert`, takes.
 */

/** The changes a revert selects, newest first: by id (every one must be the project's) or by filter. */
async function select(deps: Deps, projectId: string, body: RevertBody): Promise<ChangeRow[]> {
  // RevertBody has checked the input: changeIds or filter (one of GET /history's filters), never both
  if (body.changeIds !== undefined) {
    const ids = [...new Set(body.changeIds.map(Number))]
    const rows = await changesById(deps, projectId, ids)
    const found = new Set(rows.map((r) => Number(r.id)))
    const missing = ids.filter((id) => !found.has(id))
    if (missing.length)
      throw notFound('not_found', {
        message: `No change ${missing.join(', ')} in project ${projectId}`,
        _meta: { _tip: 'Read the change ids from GET /api/v1/history?projectId=…' },
      })
    return rows
  }
  const filter = body.filter as RevertFilter
  const rows = await selectByFilter(deps, projectId, filtersOf(filter), MAX_REVERT + 1)
  if (rows.length > MAX_REVERT)
    throw invalid(`filter selects more than ${MAX_REVERT} changes; a revert takes back at most ${MAX_REVERT}`, {
      _tip: 'Narrow the filter (since/until, requestId, agent) and revert in several calls, or send changeIds.',
    })
  return rows
}

/** A revert's body, with the changes it selected (newest first), as its handler takes it. */
export interface Selected {
  body: RevertBody
  selected: ChangeRow[]
}

/**
 * A revert's input (the row's `prepare`, step 4 of src/mutate/sequence.ts `runWrite`): the
 * changes it selects (`select`), newest first, and on PGlite 413 when taking them back would hold
 * the database over its budget (./cost-limit.ts `checkRevertCost`, issue 50, item 3), before
 * anything is locked or written; the handler, `revert`, takes them.
 */
export async function selectChanges(deps: Deps, project: AccessRow, body: RevertBody): Promise<Selected> {
  const selected = (await select(deps, project.id, body)).sort((a, b) => Number(b.id) - Number(a.id))
  checkRevertCost(deps, selected)
  return { body, selected }
}
