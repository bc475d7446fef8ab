import type { TSchema } from 'elysia'

/**
 * The 200 schema of a large read, for OpenAPI only. Elysia would otherwise check every response
 * against it at run time, which for GET /nodes on a 10,000-node project costs 20–30 ms (40% of
 * the request). These responses are checked against the same schemas in the tests instead
 * (test/response-schemas.test.ts).
 */
export function documentedResponse(schema: TSchema, description = 'OK') {
  return { responses: { 200: { description, content: { 'application/json': { schema } } } } }
}

/** A request body for OpenAPI only: the route checks the body itself, with docs/reference/errors.md's messages. */
export function documentedBody(schema: TSchema) {
  return { required: true, content: { 'application/json': { schema } } }
}
