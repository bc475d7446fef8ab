/**
 * Unversioned legacy paths (`/api/nodes`) answer exactly like `/api/v1/nodes` (docs/reference/versioning.md).
 * Some carry `Deprecation: true` and a `Link` to their successor; the rest answer plainly.
 */
const DEPRECATED = new Set([
  'nodes',
  'mutate',
  'search',
  'tree',
  'iterations',
  'projects',
  'view-command',
  'view-state',
  'share',
  'webhooks',
])

export interface Rewrite {
  /** the `/api/v1/...` path to serve */
  path: string
  deprecated: boolean
}

/** For `/api/<name>...` that is not `/api/v1/...`, the v1 path to serve; otherwise null. */
export function legacyRewrite(pathname: string): Rewrite | null {
  // nearly every request: no regular expression for it
  if (pathname.startsWith('/api/v1/')) return null
  const m = /^\/api\/([^/]+)(\/.*)?$/.exec(pathname)
  if (!m) return null
  const first = m[1]!
  if (/^v\d+$/.test(first)) return null // a versioned path, known or not
  return { path: `/api/v1/${first}${m[2] ?? ''}`, deprecated: DEPRECATED.has(first) }
}
