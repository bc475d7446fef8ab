import type { Deps } from '../deps'
import { searchOf } from './engine'

const warmed = new WeakSet<object>()

/**
 * The search loop: follow the events outbox, embed what lacks vectors (new nodes, or every
 * node after an embedder change), push to Meilisearch when it is the backend. The first run
 * also loads the embedding model in the background, so no request waits for it.
 */
export async function tick(deps: Deps, now: Date): Promise<Record<string, number>> {
  const backend = searchOf(deps)
  if (!backend) return {}
  if (!warmed.has(backend)) {
    warmed.add(backend)
    backend.warm()
  }
  return backend.tick(now)
}
