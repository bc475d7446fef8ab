import type { Deps } from '../deps'
import { BuiltinSearch } from './builtin'
import { chooseEmbedder } from './embedder/runtime'
import { MeiliBackend } from './meili'
import type { SearchBackend } from './port'

/**
 * The search backend of an app: Meilisearch when MEILI_URL is set, else the built-in index.
 * Built once by `createDeps`; `deps` must carry the app's own database, not a transaction.
 */
export function createSearch(deps: Deps): SearchBackend {
  const choice = chooseEmbedder(deps.config)
  return deps.config.meiliUrl ? new MeiliBackend(deps, choice) : new BuiltinSearch(deps, choice)
}
