/**
 * get_history (history.md, 6): the changes of a project, a node or an agent, newest first, as
 * GET /history answers them. Read-only; taking changes back is mutate's `revert`. Its arguments
 * are written compactly (the tool list is held to 3,500 tokens); the route checks each call.
 */
import { Type } from '@sinclair/typebox'

export const HistoryArgs = Type.Object({
  projectId: Type.String(),
  nodeId: Type.Optional(Type.String()),
  agent: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  // api, mcp, app, workflow or cli: named by the route's 400, not listed here (the 3,500 tokens)
  via: Type.Optional(Type.String()),
  requestId: Type.Optional(Type.String()),
  since: Type.Optional(Type.String()),
  until: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  proposals: Type.Optional(Type.String({ description: 'open|all|prp_…' })),
})

/**
 * The proposals mode (live.md §5): `proposals` reads GET /proposals (open ones, or all) or one
 * proposal with its fresh preview and conflicts, in place of the changes; within the 16 tools.
 */
function request(given: Record<string, unknown>) {
  const { proposals, ...args } = given
  if (typeof proposals !== 'string' || proposals === '') return { args }
  const { projectId, after, limit } = args
  if (proposals.startsWith('prp_')) return { args: { projectId }, path: `/proposals/${encodeURIComponent(proposals)}` }
  return { args: { projectId, after, limit, ...(proposals === 'all' ? {} : { status: proposals }) }, path: '/proposals' }
}

export const HISTORY_TOOL = {
  name: 'get_history',
  description: 'Who changed what, newest first (changeIds for revert); or proposals.',
  method: 'GET' as const,
  path: '/history',
  schema: HistoryArgs,
  request,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // changes, or in the proposals mode proposals or proposal: not required, so both answers fit
  outputSchema: { type: 'object', properties: { changes: { type: 'array' } } },
}
