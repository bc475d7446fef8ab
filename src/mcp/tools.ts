/**
 * The MCP tools: each one is one REST call. Their input schemas are the typed parameter
 * schemas of the REST routes (each module's model.ts), so a tool says what the route
 * accepts, enums included. Only model files are imported here: the MCP server is a client
 * and never reaches service code (test/mcp.test.ts scans the imports).
 */
import type { TObject } from '@sinclair/typebox'
import { FeedbackBody } from '../feedback/model'
import { IterationsParams } from '../iterations/model'
import { NodesParams } from '../nodes/model'
import { SearchParams } from '../search/model'
import { TreeParams } from '../tree/model'
import { ViewCommandBody, ViewStateParams } from '../view/model'
import { WorkflowBody } from '../workflow/model'
import { MutateArgs } from './mutate'

export interface ToolAnnotations {
  title: string
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

export interface ToolSpec {
  name: string
  description: string
  method: 'GET' | 'POST'
  path: string
  schema: TObject
  annotations: ToolAnnotations
  /** the request of a call: query parameters or a JSON body, and extra headers */
  request?: (args: Record<string, unknown>) => { args: Record<string, unknown>; headers?: Record<string, string> }
}

const read = (title: string): ToolAnnotations => ({
  title,
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
})

export const TOOLS: ToolSpec[] = [
  {
    name: 'search',
    description: 'Semantic search over a project: nodes closest in meaning to q, each with its ancestors. GET /search.',
    method: 'GET',
    path: '/search',
    schema: SearchParams,
    annotations: read('Search the plan'),
  },
  {
    name: 'list_nodes',
    description:
      'Every node of a project in creation order, optionally filtered; _meta has the current iteration and node counts. GET /nodes.',
    method: 'GET',
    path: '/nodes',
    schema: NodesParams,
    annotations: read('List nodes'),
  },
  {
    name: 'get_tree',
    description:
      'Walk the tree from nodeId (up, down, lateral, context), or format=outline for the whole project as compact text. GET /tree.',
    method: 'GET',
    path: '/tree',
    schema: TreeParams,
    annotations: read('Walk the tree'),
  },
  {
    name: 'mutate',
    description:
      'Every write: nodes, iterations, projects. Arguments are the POST /mutate body of the action; node data holds the node fields (label required on add). A refusal names the broken part.',
    method: 'POST',
    path: '/mutate',
    schema: MutateArgs,
    annotations: {
      title: 'Change the plan',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    request: ({ idempotencyKey, ...body }) => ({
      args: body,
      headers: typeof idempotencyKey === 'string' && idempotencyKey ? { 'idempotency-key': idempotencyKey } : undefined,
    }),
  },
  {
    name: 'list_iterations',
    description: 'Iterations (delivery slices) in display order; current=true gives only the current one. GET /iterations.',
    method: 'GET',
    path: '/iterations',
    schema: IterationsParams,
    annotations: read('List iterations'),
  },
  {
    name: 'run_workflow',
    description:
      'Planning state machine driven by you: start a flow (add, task-curate, phase-assign), answer each prompt, pass state back verbatim; the last step applies the changes. POST /workflow.',
    method: 'POST',
    path: '/workflow',
    schema: WorkflowBody,
    annotations: {
      title: 'Run a planning flow',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
  },
  {
    name: 'set_view',
    description:
      "Drive the live canvas in the user's app (enqueued; a connected client applies it). A write's _meta.focus.viewCommand can be sent as is. POST /view-command.",
    method: 'POST',
    path: '/view-command',
    schema: ViewCommandBody,
    annotations: {
      title: 'Move the canvas',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
  {
    name: 'read_view',
    description: "What the user's canvas shows: mode, selection, expanded nodes, last applied command. GET /view-state.",
    method: 'GET',
    path: '/view-state',
    schema: ViewStateParams,
    annotations: read('Read the canvas'),
  },
  {
    name: 'submit_feedback',
    description: "Tell Arbor's maintainers about a bug, friction or a missing feature. Not added to the plan. POST /feedback.",
    method: 'POST',
    path: '/feedback',
    schema: FeedbackBody,
    annotations: {
      title: 'Send feedback',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
  },
]

export const TOOL_BY_NAME = new Map(TOOLS.map((t) => [t.name, t]))

/**
 * A tool's JSON Schema as MCP publishes it: the route's schema without TypeBox's symbols,
 * unions of string literals as `enum`s (the same values, fewer tokens), and `projectId`
 * optional, since the server may have a default project (ARBOR_PROJECT_ID).
 */
export function inputSchema(spec: ToolSpec): Record<string, unknown> {
  const schema = compact(JSON.parse(JSON.stringify(spec.schema))) as { properties: Record<string, unknown>; required?: string[] }
  if (schema.properties.projectId) {
    schema.properties.projectId = { type: 'string', description: 'default ARBOR_PROJECT_ID' }
    schema.required = schema.required?.filter((r) => r !== 'projectId')
    if (schema.required?.length === 0) delete schema.required
  }
  return schema
}

function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compact)
  if (typeof node !== 'object' || node === null) return node
  const { anyOf, ...rest } = node as Record<string, unknown>
  if (Array.isArray(anyOf) && anyOf.every((v) => typeof v?.const === 'string'))
    return { type: 'string', enum: anyOf.map((v) => v.const), ...rest }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, compact(v)]))
}
