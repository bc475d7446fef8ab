import { type Static, Type } from '@sinclair/typebox'
import { ruled } from '../http/action-schema'
import { TYPED } from '../http/query'
import { typedParams } from '../http/typed-params'
import { NODE_TYPES } from '../nodes/model'

export const SEARCH_LIMIT = { default: 5, max: 20 } as const
export const SEARCH_MODES = ['hybrid', 'keyword', 'semantic'] as const

/**
 * The values of GET /search's query string (strings), each part with docs/reference/reads.md's refusal, checked
 * by the service after the access check (checkInput, src/http/action-schema.ts), in this order.
 */
export const SearchQuery = Type.Object(
  {
    projectId: Type.String(),
    q: ruled(Type.String({ pattern: '\\S', description: 'natural language; only the first 1,000 characters are used' }), (q) =>
      q === undefined
        ? 'q is required'
        : { message: 'q is required: a natural-language query', tip: 'Send q=<what you are looking for>, e.g. q=where do we track churn' },
    ),
    type: Type.Optional(ruled(Type.Union(NODE_TYPES.map((n) => Type.Literal(n))), `type must be one of: ${NODE_TYPES.join(', ')}`)),
    limit: Type.Optional(
      ruled(
        Type.String({
          pattern: '^0*([1-9]|1[0-9]|20)$',
          description: `1 to ${SEARCH_LIMIT.max}, default ${SEARCH_LIMIT.default}`,
          [TYPED]: Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT.max }),
        }),
        {
          message: `limit must be an integer from 1 to ${SEARCH_LIMIT.max}`,
          tip: `Omit limit for the default of ${SEARCH_LIMIT.default}.`,
        },
      ),
    ),
    mode: Type.Optional(
      ruled(
        Type.Union(
          SEARCH_MODES.map((m) => Type.Literal(m)),
          { description: 'Arbor extension for evaluation (default hybrid)' },
        ),
        `mode must be one of: ${SEARCH_MODES.join(', ')}`,
      ),
    ),
  },
  { additionalProperties: false },
)
export type SearchQuery = Static<typeof SearchQuery>
/** GET /search parameters, typed, as OpenAPI documents them. */
export const SearchParams = typedParams(SearchQuery)
/** The same for the MCP tool, without mode (an evaluation switch) and q's pattern (the tool list's token budget). */
export const SearchToolParams = typedParams(SearchQuery, { without: ['mode'], patterns: false })
