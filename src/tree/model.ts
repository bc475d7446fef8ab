import { Type } from '@sinclair/typebox'
import { RefusalError } from '../errors'
import { IntegerText, ruled } from '../http/action-schema'
import { typedParams } from '../http/typed-params'
import { literals } from '../ports/schema-rules'
import { OUTLINE_BUDGET } from './outline'

export const DIRECTIONS = ['up', 'down', 'lateral', 'context'] as const

/**
 * A walk's query string with docs/reference/reads.md's messages, checked in this order after the access check
 * (checkInput): a bad direction is a 400 {error}, a missing nodeId a 400 {errors}.
 */
export const TreeWalkQuery = Type.Object(
  {
    projectId: Type.String(),
    direction: ruled(
      literals(DIRECTIONS, { description: 'required unless format=outline' }),
      () => new RefusalError(400, `direction must be one of: ${DIRECTIONS.join(', ')}`),
    ),
    nodeId: ruled(Type.String({ minLength: 1 }), 'nodeId is required'),
    budget: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)

/** GET /tree?format=…'s values, checked in this order after the access check (checkInput). */
export const TreeOutlineQuery = Type.Object(
  {
    projectId: Type.String(),
    nodeId: Type.Optional(Type.String({ description: 'required for a walk; with format=outline, outline this node and the path to it' })),
    direction: Type.Optional(Type.String()),
    format: ruled(
      Type.Literal('outline', {
        description:
          'the whole project (or nodeId and the path to it) as indented text for a model: ids, labels and statuses, breadth-first within budget, the rest summarised as counts per subtree',
      }),
      () => new RefusalError(400, 'format must be outline (or left out for a walk with direction)'),
    ),
    budget: Type.Optional(
      IntegerText(
        OUTLINE_BUDGET.min,
        OUTLINE_BUDGET.max,
        `budget must be an integer from ${OUTLINE_BUDGET.min} to ${OUTLINE_BUDGET.max} (characters)`,
        `format=outline only: characters, default ${OUTLINE_BUDGET.default} (about 3,000 tokens)`,
      ),
    ),
  },
  { additionalProperties: false },
)

/**
 * GET /tree parameters, typed, as OpenAPI and the MCP tool document them: a walk's and an
 * outline's in one, so nodeId, direction and format are optional (a walk needs the first two, an
 * outline the last).
 */
export const TreeParams = typedParams(
  Type.Object({
    ...TreeOutlineQuery.properties,
    direction: Type.Optional(TreeWalkQuery.properties.direction),
    format: Type.Optional(TreeOutlineQuery.properties.format),
  }),
)

/** GET /outline's token budget (docs/outline-and-mcp.md). */
export const TOKEN_BUDGET = { default: 4_000, min: 200, max: 50_000 } as const

/** GET /outline's values, checked after the access check (checkInput): budget in digits only. */
export const OutlineQuery = Type.Object(
  {
    projectId: Type.String(),
    nodeId: Type.Optional(Type.String({ description: 'outline this subtree; default the whole project' })),
    budget: Type.Optional(
      IntegerText(
        TOKEN_BUDGET.min,
        TOKEN_BUDGET.max,
        `budget must be an integer from ${TOKEN_BUDGET.min} to ${TOKEN_BUDGET.max} (o200k_base tokens)`,
        `o200k_base tokens, default ${TOKEN_BUDGET.default}`,
        '^[0-9]{1,6}$',
      ),
    ),
  },
  { additionalProperties: false },
)
/** GET /outline parameters, typed, as OpenAPI and the MCP tool document them. */
export const OutlineParams = typedParams(OutlineQuery)
