/** Helpers for the advisory `_meta` object that may sit next to any response's data. */

export const guidePath = '/api/v1/guide'

export function guideUrl(publicBaseUrl: string): string {
  return publicBaseUrl + guidePath
}

/** Endpoints whose 400/401/403 carry `_meta.guide` (docs/reference/errors.md). */
const GUIDED = ['mutate', 'search', 'nodes', 'tree', 'outline', 'iterations', 'workflow']

export function isGuidedPath(pathname: string): boolean {
  const m = /^\/api\/(?:v1\/)?([^/]+)/.exec(pathname)
  return !!m && GUIDED.includes(m[1]!)
}
