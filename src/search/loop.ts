import type { Deps } from '../deps'
import type { Loop } from '../loop'

/**
 * One run of the search loop: follow the events outbox, embed what lacks vectors (new nodes,
 * or every node after an embedder change), push to Meilisearch when it is the backend.
 */
export const tick = (deps: Deps, now: Date) => deps.search.tick(now)

/**
 * Scheduled every second and woken after writes (at most every 100 ms). The embedding model is not loaded at start:
 * an idle server stays small (the model takes ~230 MB and is ended again after a minute with
 * nothing to embed), and the first batch or query that needs it loads it (~1 s, the same wait
 * as after any idle minute). On stop, the backend gives up what it holds for the other replicas
 * (the Meilisearch sync lease).
 */
export const searchLoop: Loop = {
  name: 'search',
  everySeconds: () => 1,
  tick,
  wakeOn: 'events',
  wakeEveryMs: 100,
  onStart: (deps) => async () => await deps.search.stop?.(),
}
