/**
 * Arguments of the tools for agents (docs/agents.md): GET /projects'
 * one flag, GET /ready's parameters, and the `claim` / `releaseClaim` bodies of POST /mutate
 * (the tool adds the action). Written compactly rather than derived from src/work/model.ts and
 * the action schemas: theirs repeat a title and a description per object and would cost the
 * tool list ~150 tokens more (3,500 in all is the limit). The route checks every call with its
 * own schema and answers a mistake with its message.
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
