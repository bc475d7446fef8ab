import type { Deps } from '../deps'
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
