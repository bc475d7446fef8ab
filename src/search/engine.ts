import type { CommitHandOff } from '../ports/commits'
import type { SearchBackend, SearchDeps } from '../ports/search'
import { BuiltinSearch } from './builtin'
import { chooseEmbedder } from './embedder/runtime'
import { MeiliBackend } from './meili'

/**
 * The search backend of an app: Meilisearch when MEILI_URL is set, else the built-in index.
 * Built once by `createDeps`, from the app's own database handle (not a transaction) and the
 * app's commit hand-off (the built-in index on PGlite takes its events from it).
 */
export function createSearch(deps: SearchDeps & { commits: CommitHandOff }): SearchBackend {
  const choice = chooseEmbedder(deps.config)
  return deps.config.meiliUrl ? new MeiliBackend(deps, choice) : new BuiltinSearch(deps, choice)
}
