/**
 * The MCP server: a thin client of Arbor's REST API. Each tool is one REST call with the
 * caller's API key; the API's answer goes back unchanged (its `_meta` hints included), and a
 * refusal comes back as a tool error carrying the API's status, message and `_meta.guide`.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import pkg from '../../package.json' with { type: 'json' }
import { inputSchema, TOOL_BY_NAME, TOOLS, type ToolSpec } from './tools'

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
}

const INSTRUCTIONS =
  'Arbor stores a planning tree per project: goal > need > approach (bet) > job, plus standalone tasks; jobs and tasks sit in iterations. ' +
  'Find a projectId with list_projects, orient with get_outline or search, change with mutate (send an idempotencyKey on writes), and use run_workflow for guided planning. ' +
  'To do work: ready_work, claim_work, then mutate with the claimToken, release_work when you stop. ' +
  'Results keep the API’s _meta hints (_tip, focus.viewCommand for set_view, guide).'

/** The tools a server offers: all of them, or in read-only mode those that change nothing. */
const offered = (options: Pick<McpOptions, 'readOnly'>) => TOOLS.filter((t) => !options.readOnly || t.annotations.readOnlyHint)

/** The tool list as tools/list returns it. */
export function toolList(options: Pick<McpOptions, 'projectId' | 'readOnly'> = {}) {
  return offered(options).map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: inputSchema(t, options.projectId),
    outputSchema: t.outputSchema,
    annotations: t.annotations,
  }))
}

export function createMcpServer(options: McpOptions): Server {
  const server = new Server({ name: 'arbor', version: pkg.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const tools = toolList(options)
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
  server.setRequestHandler(CallToolRequestSchema, (req) => callTool(options, req.params.name, req.params.arguments ?? {}))
  return server
}

/** One tool call: one REST request, its JSON answer as the result. */
export async function callTool(options: McpOptions, name: string, given: Record<string, unknown>): Promise<CallToolResult> {
  const spec = TOOL_BY_NAME.get(name)
  if (!spec)
    return failure({
      error: 'unknown_tool',
      message: `No tool ${name}; tools: ${offered(options)
        .map((t) => t.name)
        .join(', ')}`,
    })
  if (options.readOnly && !spec.annotations.readOnlyHint)
    return failure({ error: 'read_only', message: `${name} changes the plan, and this MCP server is read-only; its tools change nothing` })
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
  } catch {}
  if (!res.ok) return failure(isObject(body) ? { status: res.status, ...body } : { status: res.status, error: text })
  if (isObject(body) && spec.refused?.(body)) return failure(body)
  return {
    content: [{ type: 'text', text: typeof body === 'string' ? body : JSON.stringify(body) }],
    ...(isObject(body) ? { structuredContent: body } : {}),
  }
}

function buildRequest(options: McpOptions, spec: ToolSpec, given: Record<string, unknown>): Request {
  const { args, headers: extra } = spec.request?.(given) ?? { args: given }
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    accept: 'application/json',
    'user-agent': `arbor-mcp/${pkg.version}`,
    ...extra,
  }
  const url = new URL(options.apiUrl + spec.path)
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
