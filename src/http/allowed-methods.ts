/**
 * The methods a path answers to, from the app's route table: a request on a known path with
 * another method gets 405 with `Allow` (issue 55), not 404 `unknown_endpoint`, which stays the
 * answer for a path nothing serves.
 */
export interface RouteEntry {
  method: string
  path: string
}

/** `/api/v1/nodes/:id` → a pattern matching one path segment per parameter, `*` matching the rest. */
function pattern(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${escaped}/?$`)
}

/** The methods (upper case, sorted; HEAD beside GET, as the server answers it) of the routes matching `pathname`, or [] when none does. */
export function allowedMethods(routes: readonly RouteEntry[], pathname: string): string[] {
  const methods = new Set<string>()
  for (const route of routes) {
    if (route.method === 'ALL' || !pattern(route.path).test(pathname)) continue
    methods.add(route.method.toUpperCase())
  }
  if (methods.has('GET')) methods.add('HEAD')
  return [...methods].sort()
}
