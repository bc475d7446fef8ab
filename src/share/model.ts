import { type Static, Type } from '@sinclair/typebox'
import { RefusalError } from '../errors'
import { nullable, refined, ruled } from '../http/action-schema'
import { NODE_TYPES, StoredNodeData } from '../ports/node-data'
import { literals } from '../ports/schema-rules'

/** The most goals one share link names: a project's goals are far fewer, and every read of the link filters by them. */
export const MAX_INCLUDED_GOALS = 1000

const bad = (error: string) => () => new RefusalError(400, error)
const GoalIds = ruled(
  refined(
    Type.Array(Type.String(), { description: `goal ids, at most ${MAX_INCLUDED_GOALS} distinct` }),
    (ids) => new Set(ids).size <= MAX_INCLUDED_GOALS,
  ),
  (ids) =>
    new RefusalError(
      400,
      Array.isArray(ids) && ids.every((id) => typeof id === 'string')
        ? `settings.includedGoalIds has ${new Set(ids).size} distinct ids; at most ${MAX_INCLUDED_GOALS} are allowed`
        : 'settings.includedGoalIds must be an array of goal ids',
    ),
)

/** POST /share's body, checked (afterAccess) once the caller's access to the project is known: 403 or 404 before 400. */
export const CreateShareBody = Type.Object(
  {
    projectId: Type.String(),
    // docs/reference/share.md: only a positive number sets an expiry; any other value is accepted and means never
    expiresInDays: Type.Optional(Type.Unknown({ description: 'a positive number of days; anything else means the link never expires' })),
    settings: Type.Optional(
      ruled(
        nullable(
          Type.Object(
            {
              includedGoalIds: Type.Optional(nullable(GoalIds)),
            },
            { description: '{includedGoalIds?: goal ids}: share only these goals and what is beneath them' },
          ),
        ),
        bad('settings must be an object: {includedGoalIds?}'),
      ),
    ),
  },
  { additionalProperties: false },
)
export type CreateShareBody = Static<typeof CreateShareBody>

/** A node as a share link shows it: its data without `notes`. */
export const PublicNode = Type.Object({
  id: Type.String(),
  type: literals(NODE_TYPES),
  parentId: Type.Union([Type.String(), Type.Null()]),
  data: Type.Omit(StoredNodeData, ['notes'], { description: 'the node data without notes' }),
})
export type PublicNode = Static<typeof PublicNode>
