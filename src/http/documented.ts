import type { TObject, TSchema } from '@sinclair/typebox'
import { describe } from './query'

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

/**
 * The query parameters of a route, for OpenAPI only: the route checks its query string itself
 * (checkInput, src/http/action-schema.ts), with docs/reference/errors.md's messages. `schema` gives each
 * parameter typed (its enum, its bounds), as the MCP tools publish it.
 */
export function documentedQuery(schema: TObject) {
  return {
    parameters: Object.entries(schema.properties).map(([name, prop]) => ({
      name,
      in: 'query',
      required: schema.required?.includes(name) ?? false,
      schema: { ...prop, description: describe(prop) },
    })),
  }
}

/**
 * The OpenAPI detail of a route that takes its input from the query string and answers a large
 * read: its parameters and its 200, both for OpenAPI only (the two above).
 */
export function queryDetail(tag: string, summary: string, query: TObject, response: TSchema) {
  return { ...documentedQuery(query), summary, tags: [tag], ...documentedResponse(response) }
}

/**
 * The query parameters of a route with a path parameter (`/proposals/:proposalId`), for OpenAPI
 * only: @elysiajs/openapi replaces such a route's `parameters` with its path parameters, so they
 * ride in QUERY_OF_PATH and completeOpenApi (./schemas.ts) adds them back.
 */
export function documentedPathQuery(schema: TObject) {
  return { [QUERY_OF_PATH]: documentedQuery(schema).parameters }
}
export const QUERY_OF_PATH = 'x-arbor-query'
