import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { NODE_TYPES } from '../nodes/model'
import type { NodeData } from '../ports/node-data'
import type { DuplicateAdvisory, SearchAnswer, SearchMode } from '../ports/search'
import { requireProject } from '../projects/access'
import { clip, MAX_QUERY_CHARS } from './document'

export const SEARCH_LIMIT = { default: 5, max: 20 } as const
const MODES: SearchMode[] = ['hybrid', 'keyword', 'semantic']

export interface SearchQuery {
  projectId?: string
  q?: string
  type?: string
  limit?: string
  mode?: string
}

/** GET /search (api.md): the nodes closest in meaning to `q`, best first, with their ancestors. */
export async function search(deps: Deps, user: User, query: SearchQuery) {
  const { project } = await requireProject(deps, user, query.projectId)
  const q = clip((query.q ?? '').trim(), MAX_QUERY_CHARS)
  if (!q)
    throw invalid('q is required: a natural-language query', { _tip: 'Send q=<what you are looking for>, e.g. q=where do we track churn' })
  if (query.type !== undefined && !(NODE_TYPES as readonly string[]).includes(query.type))
    throw invalid(`type must be one of: ${NODE_TYPES.join(', ')}`)
  const limit = query.limit === undefined ? SEARCH_LIMIT.default : /^\d+$/.test(query.limit) ? Number(query.limit) : NaN
  if (!(limit >= 1 && limit <= SEARCH_LIMIT.max))
    throw invalid(`limit must be an integer from 1 to ${SEARCH_LIMIT.max}`, {
      _tip: `Omit limit for the default of ${SEARCH_LIMIT.default}.`,
    })
  const mode = (query.mode ?? 'hybrid') as SearchMode
  if (!MODES.includes(mode)) throw invalid(`mode must be one of: ${MODES.join(', ')}`)

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
