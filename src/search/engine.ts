import { BuiltinSearch } from './builtin'
import { chooseEmbedder } from './embedder/runtime'
import { MeiliBackend } from './meili'
import type { SearchBackend, SearchDeps } from './port'

/**
 * The search backend of an app: Meilisearch when MEILI_URL is set, else the built-in index.
 * Built once by `createDeps`, from the app's own database handle (not a transaction).
 */
export function createSearch(deps: SearchDeps): SearchBackend {
  const choice = chooseEmbedder(deps.config)
  return deps.config.meiliUrl ? new MeiliBackend(deps, choice) : new BuiltinSearch(deps, choice)
}
