import type { Deps } from '../deps'
import type { Loop } from '../scheduler'

/**
 * One run of the search loop: follow the events outbox, embed what lacks vectors (new nodes,
 * or every node after an embedder change), push to Meilisearch when it is the backend.
 */
export const tick = (deps: Deps, now: Date) => deps.search.tick(now)

/**
 * Scheduled every second and woken after every write; the model starts loading in the
 * background when the scheduler starts, so no request waits for it. On stop, the backend gives
 * up what it holds for the other replicas (the Meilisearch sync lease).
 */
export const searchLoop: Loop = {
  name: 'search',
  everySeconds: () => 1,
  tick,
  wakeOn: 'events',
  wakeEveryMs: 100,
  onStart: (deps) => {
    deps.search.warm()
    return async () => await deps.search.stop?.()
  },
}
