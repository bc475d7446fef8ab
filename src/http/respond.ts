/** A JSON response with the given status and extra headers. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return jsonText(JSON.stringify(body), status, headers)
}

/**
 * A JSON response whose text is already made (a cached answer). Elysia checks no response
 * schema on a Response: the route's schema still documents it, and its tests hold it to the schema.
 */
export function jsonText(text: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } })
}
