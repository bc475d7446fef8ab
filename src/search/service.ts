import type { User } from '../accounts/model'
import type { Db } from '../db'
import type { Deps } from '../deps'
import { afterAccess } from '../http/action-schema'
import type { NodeData } from '../ports/node-data'
import type { DuplicateAdvisory, SearchAnswer, SearchMode } from '../ports/search'
import { requireProject } from '../projects/access'
import { clip, MAX_QUERY_CHARS } from './document'
import { SEARCH_LIMIT, SearchQuery } from './model'
import { backfillProgress as readBackfillProgress } from './queries'

/** How far the background (re-)embedding for `embedder` is (`arbor doctor` reads it when no server runs). */
export const backfillProgress = (db: Db, embedder: string) => readBackfillProgress(db, embedder)

/** GET /search (docs/reference/reads.md): the nodes closest in meaning to `q`, best first, with their ancestors. */
export async function search(deps: Deps, user: User, raw: Record<string, unknown>) {
  const { project, input: query } = await afterAccess((id) => requireProject(deps, user, id), 'query', SearchQuery, raw)
  const q = clip(query.q.trim(), MAX_QUERY_CHARS)
  const limit = query.limit === undefined ? SEARCH_LIMIT.default : Number(query.limit)
  const mode: SearchMode = query.mode ?? 'hybrid'

  const key = `search\n${mode}\n${limit}\n${query.type ?? ''}\n${q}`
  return deps.reads.answer(project.id, key, { keep: (r) => settled(deps, r._meta.search) }, async () =>
    searchAnswer(await deps.search.search(project.id, { q, type: query.type, limit, mode })),
  )
}

/**
 * A search answer is kept only when nothing but a write can change it: the built-in index, with
 * every node embedded (a keyword-only answer too: its _meta.search counts what is still being
 * embedded) and nothing to explain. Meilisearch indexes after our
 * commit, on its own time, so its answers are never kept.
 */
const settled = (deps: Pick<Deps, 'search'>, meta: SearchAnswer['meta']) =>
  deps.search.name === 'builtin' && (meta.semantic === 'full' || meta.semantic === 'off') && meta.pendingNodes === 0 && !meta.reason

function searchAnswer(answer: SearchAnswer) {
  const meta: Record<string, unknown> = { search: answer.meta }
  if (answer.meta.reason) meta._tip = answer.meta.reason
  else if (answer.meta.semantic === 'partial')
    meta._tip = `${answer.meta.pendingNodes} node(s) are still being indexed for meaning (embedder ${answer.meta.embedder}); until then they match by keyword only.`
  else if (answer.meta.semantic === 'unavailable')
    meta._tip = 'The embedding model did not answer in time: these results are ranked by keyword only. Retry shortly.'
  else if (answer.hits.length === 0)
    meta._tip = 'Nothing matched. Try other words, drop the type filter, or list everything with GET /nodes.'
  return { results: answer.hits, _meta: meta as typeof meta & { search: SearchAnswer['meta'] } }
}

/**
 * `_meta.advisory` for an add that looks like an existing node of the same type (issue 4,
 * near-duplicate warning). Advisory only: never throws and never holds an add back for long.
 */
export async function possibleDuplicate(
  deps: Pick<Deps, 'search' | 'log'>,
  projectId: string,
  node: { id: string; type: string; data: NodeData },
): Promise<DuplicateAdvisory | null> {
  try {
    return await deps.search.duplicates(projectId, node)
  } catch (err) {
    deps.log.warn('search: duplicate check failed', { error: String(err) })
    return null
  }
}
