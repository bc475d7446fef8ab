/**
 * The MCP server: a thin client of Arbor's REST API. Each tool is one REST call with the
 * caller's API key; the API's answer goes back unchanged (its `_meta` hints included), and a
 * refusal comes back as a tool error carrying the API's status, message and `_meta.guide`.
 * Built on the v2 SDK (`@modelcontextprotocol/server`): one factory serves protocol revision
 * 2026-07-28 (no `initialize`, a per-request envelope) and the 2025 revisions alike.
 *
 * It is also an MCP App (extension io.modelcontextprotocol/ui): the resource ui://arbor/plan.html
 * is the plan view a host shows for open_plan, and the tools marked app-only are for that view.
 */
import {
  type CallToolResult,
  CLIENT_INFO_META_KEY,
  type Implementation,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type Tool,
} from '@modelcontextprotocol/server'
import pkg from '../../package.json' with { type: 'json' }
import { ROLE_MAY, type Role } from '../accounts/scope'
import { planHtml } from '../web/plan-bundle'
import { inputSchema, PLAN_URI, TOOL_BY_NAME, TOOLS, type ToolSpec } from './tools'

export interface McpOptions {
  /** the versioned API root, e.g. http://localhost:3000/api/v1 */
  apiUrl: string
  apiKey: string
  /** the project a tool uses when its call names none */
  projectId?: string
  /** how requests reach the API: the global fetch, or the app's own handler in-process */
  fetch?: (req: Request) => Promise<Response>
  /** list and run only the tools that change nothing (ARBOR_MCP_READ_ONLY=1, /mcp?readOnly=1) */
  readOnly?: boolean
  /** the role of the key (live.md §6, GET /tier-status's `key.scope`): a read key gets the tools that change nothing */
  role?: Role
  /** the client as a 2025 client's session id names it (./session.ts): initialize was answered by another server */
  client?: Implementation
  /** where a problem worth an operator's eye goes (default: a JSON line on stderr) */
  warn?: (msg: string, fields: Record<string, unknown>) => void
}

const INSTRUCTIONS =
  'Arbor stores a planning tree per project: goal > need > approach (bet) > job, plus standalone tasks; jobs and tasks sit in iterations. ' +
  'Find a projectId with list_projects, orient with get_outline or search, change with mutate (send an idempotencyKey on writes), and use run_workflow for guided planning. ' +
  'To do work: ready_work, claim_work, then mutate with the claimToken, release_work when you stop. ' +
  'open_plan shows the plan to the user in the chat; set_view/read_view with view:"chat" steer and read it. ' +
  'Results keep the API’s _meta hints (_tip, focus.viewCommand for set_view, guide).'

export const UI_EXTENSION = 'io.modelcontextprotocol/ui'
export const UI_MIME = 'text/html;profile=mcp-app'

/** The tools that write which a key of a role other than write may use (live.md §6); a read key has none. */
const ROLE_TOOLS: Partial<Record<Role, ReadonlySet<string>>> = {
  propose: new Set(['mutate']),
  work: new Set(['mutate', 'claim_work', 'release_work']),
}

/**
 * The tools a server offers: all of them, or in read-only mode (or for a read key) those that
 * change nothing; a propose or work key gets those and the writes its role may use.
 */
const offered = (options: Pick<McpOptions, 'readOnly' | 'role'>) =>
  TOOLS.filter(
    (t) =>
      t.annotations.readOnlyHint ||
      (!options.readOnly && (!options.role || options.role === 'write' || !!ROLE_TOOLS[options.role]?.has(t.name))),
  )

/** What a propose or work key may, told to the model in the descriptions of the tools that write (live.md §6). */
const ROLE_NOTE: Partial<Record<Role, string>> = {
  propose:
    'read everything, and through mutate only propose changes for a person to apply (action propose) and withdraw its own proposals (withdrawProposal)',
  work: "read everything, propose, claim_work, renew and release_work its claims, and mutate update a node only while this key holds its live claim (send that claim's claimToken)",
}

/** A writing tool's description for a key whose role limits it: what the key may, so the model does not try the rest. */
const roleNote = (t: ToolSpec, role: Role | undefined) =>
  role && ROLE_NOTE[role] && !t.annotations.readOnlyHint
    ? `${t.description} This key has role ${role}: it may ${ROLE_NOTE[role]}; anything else is refused (key_scope).`
    : t.description

/** A tool's `_meta`: where its view is (MCP Apps, with the older key and OpenAI's alias) and who may call it. */
function toolMeta(t: ToolSpec): Record<string, unknown> | undefined {
  if (t.appOnly) return { ui: { resourceUri: PLAN_URI, visibility: ['app'] } }
  if (t.opensView) return { ui: { resourceUri: PLAN_URI }, 'openai/outputTemplate': PLAN_URI }
  return undefined
}

/** The tool list as tools/list returns it. */
export function toolList(options: Pick<McpOptions, 'projectId' | 'readOnly' | 'role'> = {}): Tool[] {
  return offered(options).map((t) => {
    const meta = toolMeta(t)
    return {
      name: t.name,
      description: roleNote(t, options.role),
      inputSchema: inputSchema(t, options.projectId) as Tool['inputSchema'],
      outputSchema: t.outputSchema as Tool['outputSchema'],
      annotations: t.annotations,
      ...(meta ? { _meta: meta } : {}),
    }
  })
}

/** The plan view as resources/list describes it. */
export const PLAN_RESOURCE = {
  uri: PLAN_URI,
  name: 'arbor-plan',
  title: 'Arbor plan',
  description: 'The plan as a live tree the user can edit, steered by set_view view:"chat" (MCP App).',
  mimeType: UI_MIME,
  // one document, no outside origin: the host's default CSP holds
  _meta: { ui: { prefersBorder: true, csp: { connectDomains: [], resourceDomains: [] } } },
}

export function createMcpServer(options: McpOptions): Server {
  const server = new Server(
    { name: 'arbor', version: pkg.version },
    {
      // no prompts of its own (prompts/list answers an empty list); logging/setLevel is accepted, and nothing is logged to the client
      capabilities: { tools: {}, resources: {}, prompts: {}, logging: {}, extensions: { [UI_EXTENSION]: {} } },
      instructions: INSTRUCTIONS,
    },
  )
  const tools = toolList(options)
  server.setRequestHandler('tools/list', () => ({ tools }))
  server.setRequestHandler('tools/call', (req, ctx) => {
    // who is calling: the request's own envelope (2026-07-28), else what initialize said (2025):
    // to this server (stdio), or over HTTP to the server that answered it, as the session id says
    const envelope = (ctx.mcpReq as { envelope?: Record<string, unknown> }).envelope
    const client = (envelope?.[CLIENT_INFO_META_KEY] as Implementation | undefined) ?? server.getClientVersion() ?? options.client
    return callTool({ ...options, client }, req.params.name, req.params.arguments ?? {})
  })
  server.setRequestHandler('resources/list', () => ({ resources: [PLAN_RESOURCE] }))
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }))
  server.setRequestHandler('prompts/list', () => ({ prompts: [] }))
  server.setRequestHandler('resources/read', async (req) => {
    if (req.params.uri !== PLAN_URI) throw new ResourceNotFoundError(req.params.uri)
    const { _meta, uri, mimeType } = PLAN_RESOURCE
    return { contents: [{ uri, mimeType, text: await planHtml(), _meta }] }
  })
  return server
}

/** `X-Agent-Id`: the client's own name and version (history.md, Actors), within the header's 100 characters. */
export const agentId = (client: Implementation | undefined) =>
  client?.name ? `${client.name}/${client.version ?? ''}`.replace(/[^\x20-\x7e]/g, '').slice(0, 100) : undefined

/** One tool call: one REST request, its JSON answer as the result. An unknown tool is a protocol error (-32602). */
export async function callTool(
  options: McpOptions & { client?: Implementation },
  name: string,
  given: Record<string, unknown>,
): Promise<CallToolResult> {
  const spec = TOOL_BY_NAME.get(name)
  if (!spec)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Unknown tool ${name}; tools: ${offered(options)
        .map((t) => t.name)
        .join(', ')}`,
    )
  if (options.readOnly && !spec.annotations.readOnlyHint)
    return failure({ error: 'read_only', message: `${name} changes the plan, and this MCP server is read-only; its tools change nothing` })
  if (!offered(options).includes(spec))
    return failure({
      error: 'key_scope',
      message: `${name} is not for this key: its role ${options.role} allows ${ROLE_MAY[options.role!]}`,
    })
  const args = { ...given }
  if (Object.hasOwn(spec.schema.properties, 'projectId') && (args.projectId === undefined || args.projectId === '')) {
    if (options.projectId) args.projectId = options.projectId
    else if (spec.needsProject ? spec.needsProject(args) : spec.schema.required?.includes('projectId'))
      // a model's missing argument, not a refusal: the API would answer 403 as if the project were someone else's
      return failure({
        error: 'projectId is required',
        message: `${name} needs projectId: call list_projects for the ids of your projects`,
      })
  }
  const mistake = spec.check?.(args)
  if (mistake) return failure(mistake)
  let res: Response
  try {
    res = await (options.fetch ?? fetch)(buildRequest(options, spec, args))
  } catch (err) {
    return failure({ error: 'api_unreachable', message: `The Arbor API at ${options.apiUrl} did not answer: ${(err as Error).message}` })
  }
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch (err) {
    // the API answers JSON; anything else (a proxy's page) goes back as text, and an operator hears of it
    ;(options.warn ?? warnOnStderr)('mcp: the API answered something that is not JSON', {
      tool: name,
      status: res.status,
      contentType: res.headers.get('content-type'),
      reason: (err as Error).message,
    })
  }
  if (!res.ok) return failure(isObject(body) ? { status: res.status, ...body } : { status: res.status, error: text })
  if (isObject(body) && spec.refused?.(body)) return failure(body)
  if (!isObject(body)) return { content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body) }] }
  let structured = spec.opensView ? { projectId: args.projectId, ...(args.nodeId ? { nodeId: args.nodeId } : {}), ...body } : body
  if (spec.presence && typeof args.projectId === 'string') structured = await withPresence(options, args.projectId, structured)
  return {
    content: [{ type: 'text', text: spec.text ? spec.text(body) : JSON.stringify(structured) }],
    structuredContent: structured,
  }
}

/** The ids of the node objects in an answer ({id, type, …} anywhere in it). */
function nodeIds(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) nodeIds(v, into)
  else if (isObject(value)) {
    if (typeof value.id === 'string' && typeof value.type === 'string') into.add(value.id)
    for (const v of Object.values(value)) if (typeof v === 'object' && v !== null) nodeIds(v, into)
  }
  return into
}

/**
 * A read of nodes, with `presence`: the people and other agents on those nodes now (live.md, 3;
 * GET /presence, a second REST call), so a model leaves alone a field someone is editing. The
 * caller's own presence is left out; nothing is added when nobody else is there, or when the
 * presence cannot be read.
 */
async function withPresence(
  options: McpOptions & { client?: Implementation },
  projectId: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const ids = nodeIds(body)
  if (ids.size === 0) return body
  const spec: ToolSpec = { ...TOOL_BY_NAME.get('list_projects')!, path: '/presence' }
  try {
    const res = await (options.fetch ?? fetch)(buildRequest(options, spec, { projectId }))
    if (!res.ok) return body
    const { presence } = (await res.json()) as { presence?: { nodeId?: unknown; actor?: { via?: string; agent?: string } }[] }
    const self = agentId(options.client)
    const others = (presence ?? []).filter(
      (p) => typeof p.nodeId === 'string' && ids.has(p.nodeId) && !(p.actor?.via === 'mcp' && p.actor?.agent === self),
    )
    return others.length ? { ...body, presence: others } : body
  } catch {
    return body
  }
}

function warnOnStderr(msg: string, fields: Record<string, unknown>) {
  console.error(JSON.stringify({ level: 'warn', time: new Date().toISOString(), msg, ...fields }))
}

function buildRequest(options: McpOptions & { client?: Implementation }, spec: ToolSpec, given: Record<string, unknown>): Request {
  const { args, headers: extra, path } = spec.request?.(given) ?? { args: given }
  const agent = agentId(options.client)
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': `arbor-mcp/${pkg.version}`,
    // who is calling (history.md, Actors): the MCP server, for the client that named itself
    'x-arbor-via': 'mcp',
    ...(agent ? { 'x-agent-id': agent } : {}),
    ...extra,
  }
  const url = new URL(options.apiUrl + (path ?? spec.path))
  if (spec.method === 'GET') {
    for (const [key, value] of Object.entries(args))
      if (value !== undefined && value !== null)
        url.searchParams.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value))
    return new Request(url.toString(), { method: 'GET', headers })
  }
  headers['content-type'] = 'application/json'
  return new Request(url.toString(), { method: 'POST', headers, body: JSON.stringify(args) })
}

function failure(body: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
