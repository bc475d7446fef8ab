import type { Deps } from '../deps'
import type { User } from './model'
import { routeNeed } from './roles'
import { requireNeed } from './scope'
import { authenticate } from './service'

/**
 * Elysia `derive` that resolves the caller before body validation, so a request
 * without a valid key gets its 401 whatever else is wrong with it.
 */
export const withUser =
  (deps: Deps) =>
  async ({ headers }: { headers: Record<string, string | undefined> }) => ({
    user: await authenticate(deps, headers.authorization),
  })

/**
 * The scope check of every request (live.md §6), before its route runs (app.ts, a global
 * transform): what the route needs (./roles.ts) against the scope of the key it carries, read
 * through the auth cache, so a changed scope holds on every replica as soon as a revocation
 * would. A route without a row needs an unrestricted key. A request without a valid key passes
 * here: its route answers the 401 (or needs no key). The project list is checked where the
 * project is (projects/access.ts); POST /mutate checks its action (ACTION_NEEDS).
 */
export function guardRoute(
  deps: Pick<Deps, 'db' | 'auth'>,
  method: string,
  route: string,
  authorization: string | null,
  request?: { body: unknown; query: Record<string, unknown> },
) {
  const need = routeNeed(method, route, request) ?? 'write'
  if (need === 'public' || need === 'admin' || need === 'action' || !authorization) return
  let user: User | Promise<User>
  try {
    user = authenticate(deps, authorization)
  } catch {
    return // the route answers 401
  }
  const what = `${method === 'HEAD' ? 'GET' : method} ${route}`
  if (!(user instanceof Promise)) return requireNeed(user.scope, need, what)
  return user.then(
    (u) => requireNeed(u.scope, need, what),
    () => {},
  )
}
