/**
 * The MCP tools: each one is one REST call. Their input schemas are the typed parameter
 * schemas of the REST routes (each module's model.ts), so a tool says what the route
 * accepts, enums included. Only model files are imported here: the MCP server is a client
 * and never reaches service code (test/mcp.test.ts scans the imports).
 */
import type { TObject } from '@sinclair/typebox'
import { FeedbackBody } from '../feedback/model'
import { IterationsParams } from '../iterations/model'
import { NodesParams } from '../nodes/input'
import { SearchToolParams } from '../search/model'
import { DIRECTIONS, OutlineParams, TreeParams } from '../tree/model'
import { ViewCommandBody, ViewStateParams } from '../view/model'
import { WorkflowBody } from '../workflow/model'
import { EditArgs, editMistake, FollowArgs, OpenPlanArgs, ReadPlanArgs, ReportArgs } from './app-tools'
import { HISTORY_TOOL } from './history'
import { MutateArgs } from './mutate'
import { OUTPUT } from './outputs'
import { ClaimArgs, ProjectsArgs, ReadyArgs, ReleaseArgs } from './work'

/** The hints of docs/mcp.md (no `title`: the name says it, and the list is held to its tokens). */
export interface ToolAnnotations {
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
  /** the JSON Schema of the result's structuredContent (outputs.ts) */
  outputSchema: Record<string, unknown>
  /** the request of a call: query parameters or a JSON body, and extra headers */
  request?: (args: Record<string, unknown>) => { args: Record<string, unknown>; headers?: Record<string, string>; path?: string }
  /** whether a call needs projectId (default: when the route's schema requires it) */
  needsProject?: (args: Record<string, unknown>) => boolean
  /** a mistake told better here than by the route: the tool error's body */
  check?: (args: Record<string, unknown>) => Record<string, unknown> | undefined
  /** a 200 answer that still did nothing (set_view on a target that does not resolve) */
  refused?: (body: Record<string, unknown>) => boolean
  /** only an MCP Apps view may call it (`_meta.ui.visibility: ["app"]`): hidden from the model */
  appOnly?: boolean
  /** its result opens the plan view (`_meta.ui.resourceUri`) */
  opensView?: boolean
  /** shorter descriptions of some arguments than the route's own (the tool list is held to its tokens) */
  describe?: Record<string, string>
  /** the text a model reads, when not the answer's JSON (open_plan: the outline) */
  text?: (body: Record<string, unknown>) => string
  /** it reads nodes: its answer carries `presence`, the others on those nodes now (live.md, 3), when there are any */
  presence?: boolean
}

/** The plan view's resource (an MCP App, extension io.modelcontextprotocol/ui). */
export const PLAN_URI = 'ui://arbor/plan.html'

const read = (): ToolAnnotations => ({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
})

const write = (destructive: boolean, idempotent: boolean): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
})

/** Idempotency-Key from the idempotencyKey argument; the rest is the body. */
const keyed =
  (extra: Record<string, unknown> = {}) =>
  ({ idempotencyKey, ...body }: Record<string, unknown>) => ({
    args: { ...extra, ...body },
    headers: typeof idempotencyKey === 'string' && idempotencyKey ? { 'idempotency-key': idempotencyKey } : undefined,
  })

export const TOOLS: ToolSpec[] = [
  {
    name: 'search',
    presence: true,
    description: 'Semantic search over a project: nodes closest in meaning to q, each with its ancestors. GET /search.',
    method: 'GET',
    path: '/search',
    schema: SearchToolParams,
    annotations: read(),
    outputSchema: OUTPUT.search,
  },
  {
    name: 'list_nodes',
    presence: true,
    description:
      'Every node of a project in creation order, optionally filtered; _meta has the current iteration and node counts. GET /nodes.',
    method: 'GET',
    path: '/nodes',
    schema: NodesParams,
    annotations: read(),
    outputSchema: OUTPUT.list_nodes,
  },
  {
    name: 'get_tree',
    presence: true,
    description:
      'Walk the tree from nodeId (up, down, lateral, context), or format=outline for the whole project as compact text. GET /tree. Adds presence: others on these nodes (a field: being edited, leave it).',
    method: 'GET',
    path: '/tree',
    schema: TreeParams,
    annotations: read(),
    outputSchema: OUTPUT.get_tree,
    describe: { format: 'the whole project (or nodeId and its path) as compact text' },
    check: (args) =>
      args.format === undefined && args.direction === undefined
        ? {
            error: 'direction is required',
            message: `get_tree needs direction: one of ${DIRECTIONS.join(', ')} (with nodeId), or format: "outline" for the whole project`,
          }
        : undefined,
  },
  {
    name: 'mutate',
    description:
      'Every write: the POST /mutate body of the action (node data: the node fields; label required on add). Pass ifRev: the rev you read; on 409 stale_write merge its current and retry.',
    method: 'POST',
    path: '/mutate',
    schema: MutateArgs,
    annotations: write(true, false),
    outputSchema: OUTPUT.mutate,
    request: keyed(),
    needsProject: (args) => args.action !== 'addProject',
  },
  {
    name: 'list_iterations',
    description: 'Iterations (delivery slices) in display order; current=true gives only the current one. GET /iterations.',
    method: 'GET',
    path: '/iterations',
    schema: IterationsParams,
    annotations: read(),
    outputSchema: OUTPUT.list_iterations,
  },
  {
    name: 'run_workflow',
    description:
      'Guided planning: start a flow (add, task-curate, phase-assign), answer each prompt, pass state back verbatim; the last step applies. POST /workflow.',
    method: 'POST',
    path: '/workflow',
    schema: WorkflowBody,
    annotations: write(true, false),
    outputSchema: OUTPUT.run_workflow,
  },
  {
    name: 'set_view',
    description:
      "Drive the user's live canvas (/app, or view:\"chat\" for open_plan's); a write's _meta.focus.viewCommand can be sent as is. POST /view-command.",
    method: 'POST',
    path: '/view-command',
    schema: ViewCommandBody,
    annotations: write(false, true),
    outputSchema: OUTPUT.set_view,
    // docs/reference/view.md answers a target that does not resolve with 200 success:false; to a model that is an error
    refused: (body) => body.success === false,
  },
  {
    name: 'read_view',
    description: 'What the user\'s canvas (or view:"chat") shows: mode, selection, expanded nodes, last applied command. GET /view-state.',
    method: 'GET',
    path: '/view-state',
    schema: ViewStateParams,
    annotations: read(),
    outputSchema: OUTPUT.read_view,
  },
  {
    name: 'submit_feedback',
    description: "A bug, friction or missing feature, for Arbor's maintainers (not the plan). POST /feedback.",
    method: 'POST',
    path: '/feedback',
    schema: FeedbackBody,
    annotations: write(false, false),
    outputSchema: OUTPUT.submit_feedback,
  },
  {
    name: 'list_projects',
    description: 'Your projects (id, name, role): where projectIds come from. GET /projects.',
    method: 'GET',
    path: '/projects',
    schema: ProjectsArgs,
    annotations: read(),
    outputSchema: OUTPUT.list_projects,
  },
  {
    name: 'get_outline',
    description:
      'The project or nodeId\'s subtree as indented markdown within a token budget, a line per node; the rest folded as "… N more". GET /outline.',
    method: 'GET',
    path: '/outline',
    schema: OutlineParams,
    annotations: read(),
    outputSchema: OUTPUT.get_outline,
  },
  {
    name: 'ready_work',
    presence: true,
    description: 'Work ready to start (open, unclaimed, unblocked jobs and do-it tasks), most urgent first, with ancestors. GET /ready.',
    method: 'GET',
    path: '/ready',
    schema: ReadyArgs,
    annotations: read(),
    outputSchema: OUTPUT.ready_work,
  },
  {
    name: 'claim_work',
    description:
      'Claim ready work (nodeIds, or count for the next) for a lease; keep each claimToken for release_work and mutate writes. POST /mutate claim.',
    method: 'POST',
    path: '/mutate',
    schema: ClaimArgs,
    annotations: write(false, false),
    outputSchema: OUTPUT.claim_work,
    request: keyed({ action: 'claim' }),
  },
  {
    name: 'release_work',
    description: 'Give a claimed item back by its claimToken. POST /mutate releaseClaim.',
    method: 'POST',
    path: '/mutate',
    schema: ReleaseArgs,
    annotations: write(false, true),
    outputSchema: OUTPUT.release_work,
    request: (args) => ({ args: { action: 'releaseClaim', ...args } }),
  },
  HISTORY_TOOL,
]

/**
 * The plan inside the chat (MCP Apps): open_plan for the model, and the tools only its view
 * calls, each one REST call like the rest. The view's commands wait in the project's `chat`
 * queue (set_view with view:"chat"), apart from the /app canvas's.
 */
TOOLS.push(
  {
    name: 'open_plan',
    description:
      'Show the user the plan (or nodeId\'s subtree) as an editable tree in the chat; steer it with set_view view:"chat". GET /outline.',
    method: 'GET',
    path: '/outline',
    schema: OpenPlanArgs,
    annotations: read(),
    outputSchema: OUTPUT.open_plan,
    opensView: true,
    // a short text: the person sees the whole tree in the view, the model a summary it can act on
    request: (args) => ({ args: { ...args, budget: 1000 } }),
    text: (body) =>
      `${body.outline}\n(The plan is shown to the user as an editable tree; set_view with view:"chat" moves it, read_view with view:"chat" reads what they selected.)`,
  },
  {
    name: 'plan_read',
    description: 'The plan view reads every node of the project. GET /nodes.',
    method: 'GET',
    path: '/nodes',
    schema: ReadPlanArgs,
    annotations: read(),
    outputSchema: OUTPUT.list_nodes,
    appOnly: true,
  },
  {
    name: 'plan_follow',
    description:
      'The plan view waits for its next commands (set_view view:"chat") or a change of the tree after revision. GET /view/commands?view=chat.',
    method: 'GET',
    path: '/view/commands',
    schema: FollowArgs,
    annotations: read(),
    outputSchema: OUTPUT.plan_follow,
    appOnly: true,
    request: (args) => ({ args: { ...args, view: 'chat' } }),
  },
  {
    name: 'plan_report',
    description: 'The plan view says what it shows and the command it applied. POST /view/report view=chat.',
    method: 'POST',
    path: '/view/report',
    schema: ReportArgs,
    annotations: write(false, true),
    outputSchema: OUTPUT.read_view,
    appOnly: true,
    request: (args) => ({ args: { ...args, view: 'chat' } }),
  },
  {
    name: 'plan_edit',
    description: "A person's edit in the plan view: add, update (rename, done), delete, restore (undo), or a batch of them. POST /mutate.",
    method: 'POST',
    path: '/mutate',
    schema: EditArgs,
    annotations: write(true, false),
    outputSchema: OUTPUT.mutate,
    appOnly: true,
    check: editMistake,
    request: keyed(),
  },
)

export const TOOL_BY_NAME = new Map(TOOLS.map((t) => [t.name, t]))

/**
 * A tool's JSON Schema as MCP publishes it: the route's schema without TypeBox's symbols, and
 * unions of string literals as `enum`s (the same values, fewer tokens). `projectId` is optional
 * when the server has a default project (ARBOR_PROJECT_ID over stdio), and says where ids come
 * from otherwise.
 */
export function inputSchema(spec: ToolSpec, defaultProject?: string): Record<string, unknown> {
  const schema = compact(JSON.parse(JSON.stringify(spec.schema))) as {
    properties: Record<string, Record<string, unknown>>
    required?: string[]
  }
  for (const [name, description] of Object.entries(spec.describe ?? {}))
    schema.properties[name] = { ...schema.properties[name], description }
  // a default project, or a tool that needs one only for some calls (mutate's addProject): not required
  if (schema.properties.projectId && (defaultProject || spec.needsProject)) {
    schema.properties.projectId = { type: 'string', description: defaultProject ? `default ${defaultProject}` : 'from list_projects' }
    schema.required = schema.required?.filter((r) => r !== 'projectId')
    if (schema.required?.length === 0) delete schema.required
  } else if (schema.properties.projectId) schema.properties.projectId = { type: 'string', description: 'from list_projects' }
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
