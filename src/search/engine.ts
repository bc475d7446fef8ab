import type { Deps } from '../deps'
import { BuiltinSearch } from './builtin'
import { chooseEmbedder } from './embedder/runtime'
import { MeiliBackend } from './meili'
import type { SearchBackend } from './port'

/**
 * The search backend of an app: Meilisearch when MEILI_URL is set, else the built-in index.
 * One per app, keyed by its config object, because services receive copies of `deps` (with
 * the transaction as `db`) while the backend must keep the app's own database handle.
 */
const backends = new WeakMap<object, SearchBackend>()

/** Create (once) the backend for an app; `deps` must carry the app's own database, not a transaction. */
export function registerSearch(deps: Deps): SearchBackend {
  let backend = backends.get(deps.config)
  if (!backend) {
    const choice = chooseEmbedder(deps.config)
    backend = deps.config.meiliUrl ? new MeiliBackend(deps, choice) : new BuiltinSearch(deps, choice)
    backends.set(deps.config, backend)
  }
  return backend
}

/** The app's backend, if it has one. */
export function searchOf(deps: Pick<Deps, 'config'>): SearchBackend | undefined {
  return backends.get(deps.config)
}
