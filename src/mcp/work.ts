/**
 * Arguments of the tools for agents (agents-and-app.md, sections 1, 2 and 6) whose routes have
 * no typed model to publish: GET /projects takes one flag, and claim_work / release_work are
 * the `claim` and `releaseClaim` bodies of POST /mutate, sent with their action. Written to the
 * spec; the route checks every body again and answers a mistake with its own message.
 */
import { Type } from '@sinclair/typebox'

export const ProjectsArgs = Type.Object({
  includeArchived: Type.Optional(Type.Boolean({ description: 'also archived projects' })),
})

export const ReadyArgs = Type.Object({
  projectId: Type.String(),
  iteration: Type.Optional(Type.String({ description: 'only this iteration (name)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 20' })),
})

export const ClaimArgs = Type.Object({
  projectId: Type.String(),
  agent: Type.String({ minLength: 1, maxLength: 100, description: 'your name, e.g. claude-code@laptop' }),
  nodeIds: Type.Optional(Type.Array(Type.String(), { description: 'these items (from ready_work), all or none' })),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'without nodeIds: the next ready items, default 1' })),
  leaseSeconds: Type.Optional(Type.Integer({ minimum: 30, maximum: 86400, description: 'default 900' })),
  idempotencyKey: Type.Optional(Type.String()),
})

export const ReleaseArgs = Type.Object({
  projectId: Type.String(),
  claimToken: Type.String({ description: 'from claim_work' }),
})
