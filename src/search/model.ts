import { Type } from '@sinclair/typebox'
import { NODE_TYPES } from '../nodes/model'

/** GET /search parameters, typed; the route takes their query-string form (asQuery). */
export const SearchParams = Type.Object({
  projectId: Type.String(),
  q: Type.String({ description: 'natural language; only the first 1,000 characters are used' }),
  type: Type.Optional(Type.Union(NODE_TYPES.map((n) => Type.Literal(n)))),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: '1 to 20, default 5' })),
})
