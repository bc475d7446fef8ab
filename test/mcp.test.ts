import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { documentedQuery } from '../src/http/documented'
import { loadMcpConfig } from '../src/mcp/config'
import { originAllowed, readOnlyAsked } from '../src/mcp/http'
import { toolList } from '../src/mcp/server'
import { ACTION_BODIES } from '../src/mutate/model'
import { SearchToolParams } from '../src/search/model'

const ROOT = join(import.meta.dir, '..')
const MCP = join(ROOT, 'src/mcp')

/** Every module a file reaches through value imports (type-only imports are erased), within src. */
function reach(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen
  seen.add(file)
  const text = readFileSync(file, 'utf8')
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)) {
    if (m[2]) continue
    const base = resolve(dirname(file), m[3]!)
    const target = ['.ts', '/index.ts', '']
      .map((ext) => base + ext)
      .find((p) => {
        try {
          return readFileSync(p) && true
        } catch {
          return false
        }
      })
    if (target?.endsWith('.ts')) reach(target, seen)
  }
  for (const m of text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) reach(`${resolve(dirname(file), m[1]!)}.ts`, seen)
  return seen
}

describe('src/mcp', () => {
  it('imports no service, queries, database or app code: it is a client of the REST API', () => {
    const reached = new Set<string>()
    for (const f of readdirSync(MCP).filter((f) => f.endsWith('.ts'))) for (const r of reach(join(MCP, f))) reached.add(r)
    const forbidden = [...reached]
      .map((f) => relative(ROOT, f))
      .filter((f) => /(^|\/)(service|queries|routes|deps|app|main)\.ts$/.test(f) || f.startsWith('src/db/'))
    expect(forbidden).toEqual([])
    // the scan does follow imports: from the app it reaches services and the database
    const fromApp = [...reach(join(ROOT, 'src/app.ts'))].map((f) => relative(ROOT, f))
    expect([fromApp.includes('src/nodes/service.ts'), fromApp.some((f) => f.startsWith('src/db/'))]).toEqual([true, true])
    // and it sees what the tools use
    expect(
      [...reached]
        .map((f) => relative(ROOT, f))
        .filter((f) => f.endsWith('/model.ts'))
        .sort(),
    ).toEqual([
      'src/feedback/model.ts',
      'src/history/model.ts',
      'src/iterations/model.ts',
      'src/mutate/model.ts',
      'src/nodes/model.ts',
      'src/projects/model.ts',
      'src/proposals/model.ts',
      'src/search/model.ts',
      'src/tree/model.ts',
      'src/view/model.ts',
      'src/work/model.ts',
      'src/workflow/model.ts',
    ])
  })

  it('publishes the routes’ typed schemas: literal unions as enums, descriptions kept, projectId optional only with a default project', () => {
    const properties = {
      q: { type: 'string', description: 'natural language; only the first 1,000 characters are used' },
      type: { type: 'string', enum: ['goal', 'need', 'approach', 'job', 'task'] },
      limit: { type: 'integer', minimum: 1, maximum: 20, description: '1 to 20, default 5' },
    }
    const search = (list: ReturnType<typeof toolList>) => list.find((t) => t.name === 'search')!.inputSchema
    expect(search(toolList())).toEqual({
      type: 'object',
      properties: { projectId: { type: 'string', description: 'from list_projects' }, ...properties },
      required: ['projectId', 'q'],
    })
    expect(search(toolList({ projectId: 'launch' }))).toEqual({
      type: 'object',
      properties: { projectId: { type: 'string', description: 'default launch' }, ...properties },
      required: ['q'],
    })
    // mutate's addProject needs no project: never required there
    expect((toolList().find((t) => t.name === 'mutate')!.inputSchema as any).required).toEqual(['action'])
  })

  it('offers at most 16 model tools, each with the three hints and an outputSchema without type lists; read-only mode only those that change nothing', () => {
    const all = toolList()
    const appOnly = (t: (typeof all)[number]) => (t._meta as any)?.ui?.visibility?.join() === 'app'
    expect(all.filter((t) => !appOnly(t)).length).toBeLessThanOrEqual(16)
    expect(all.filter(appOnly).map((t) => t.name)).toEqual(['plan_read', 'plan_follow', 'plan_report', 'plan_edit'])
    for (const t of all) {
      expect(Object.keys(t.annotations ?? {}).sort()).toEqual(['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint'])
      expect((t.outputSchema as any).type).toBe('object')
      // the Inspector's --strict refuses a list of types such as ["object","null"]
      expect(JSON.stringify([t.inputSchema, t.outputSchema])).not.toMatch(/"type":\[/)
    }
    const readOnly = toolList({ readOnly: true }).map((t) => t.name)
    expect(readOnly).toEqual(all.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name))
    expect(readOnly).toEqual([
      'search',
      'list_nodes',
      'get_tree',
      'list_iterations',
      'read_view',
      'list_projects',
      'get_outline',
      'ready_work',
      'get_history',
      'open_plan',
      'plan_read',
      'plan_follow',
    ])
  })

  it('derives mutate’s action list and per-action fields from the /mutate action schemas, less the actions with a tool of their own', () => {
    const mutate = toolList().find((t) => t.name === 'mutate')!
    const action = (mutate.inputSchema.properties as any).action
    // no enum: an action POST /mutate gains (history's revert) is never refused by the tool's schema first
    expect(action).toEqual({ type: 'string', description: expect.any(String) })
    // claim and releaseClaim have tools of their own (claim_work, release_work)
    expect(action.description.split(' | ').map((a: string) => a.split(' ')[0])).toEqual(
      // applyProposal and rejectProposal are a person's (live.md §5): not described to the model
      Object.keys(ACTION_BODIES).filter((a) => !['claim', 'releaseClaim', 'applyProposal', 'rejectProposal'].includes(a)),
    )
    expect(action.description.split(' | ').map((a: string) => a.split(':')[0])).toEqual([
      'add {node',
      'update {nodeId,data?',
      'delete {nodeId,claimToken?,ifRev?}',
      'restore {nodeId?,changelogId?}',
      'batch {mutations',
      'classify {nodeId}',
      'addIteration {iteration',
      'updateIteration {iterationName,data',
      'deleteIteration {iterationName,ifRev?}',
      'reorderIterations {order}',
      'addProject {project',
      'renameProject {name}',
      'renewClaim {claimToken,leaseSeconds?}',
      'revert {changeIds?,filter?,dryRun?,force?}',
      'propose {title,note?,mutations',
      'withdrawProposal {proposalId}',
    ])
    expect(action.description).toContain('batch {mutations:[add|update|delete|addIteration entries (no projectId)]}')
  })

  it('documents the REST route with the same typed schema', () => {
    const typed = (name: 'type' | 'limit') => JSON.parse(JSON.stringify(SearchToolParams.properties[name]))
    expect(JSON.parse(JSON.stringify(documentedQuery(SearchToolParams)))).toEqual({
      parameters: [
        { name: 'projectId', in: 'query', required: true, schema: { type: 'string' } },
        {
          name: 'q',
          in: 'query',
          required: true,
          schema: { type: 'string', description: 'natural language; only the first 1,000 characters are used' },
        },
        // an enumeration's values are listed in its description
        { name: 'type', in: 'query', required: false, schema: { ...typed('type'), description: 'goal, need, approach, job, task' } },
        { name: 'limit', in: 'query', required: false, schema: typed('limit') },
      ],
    })
  })

  it('reads ARBOR_API_KEY (required), ARBOR_PROJECT_ID, ARBOR_API_URL (default http://localhost:3000/api/v1) and ARBOR_MCP_READ_ONLY', () => {
    expect(loadMcpConfig({ ARBOR_API_KEY: 'arb_x' })).toEqual({
      apiKey: 'arb_x',
      apiUrl: 'http://localhost:3000/api/v1',
      projectId: undefined,
      readOnly: false,
    })
    expect(
      loadMcpConfig({
        ARBOR_API_KEY: 'arb_x',
        ARBOR_API_URL: 'https://plan.example/api/v1/',
        ARBOR_PROJECT_ID: 'p1',
        ARBOR_MCP_READ_ONLY: '1',
      }),
    ).toEqual({
      apiKey: 'arb_x',
      apiUrl: 'https://plan.example/api/v1',
      projectId: 'p1',
      readOnly: true,
    })
    expect(['true', 'TRUE', '0', 'no', ''].map((v) => loadMcpConfig({ ARBOR_API_KEY: 'arb_x', ARBOR_MCP_READ_ONLY: v }).readOnly)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ])
    expect(() => loadMcpConfig({})).toThrow('ARBOR_API_KEY is required')
    expect(() => loadMcpConfig({ ARBOR_API_KEY: 'arb_x', ARBOR_API_URL: 'ftp://x' })).toThrow('ARBOR_API_URL=ftp://x is invalid')
  })

  it('reads /mcp?readOnly with its name and value in any case; only a value that says off leaves the writing tools on (issue 50, 7)', () => {
    const asked = (query: string) => readOnlyAsked(new URLSearchParams(query))
    for (const q of [
      'readOnly=1',
      'readonly=1',
      'READONLY=1',
      'readOnly=true',
      'ReadOnly=TRUE',
      'readonly=yes',
      'readonly',
      'x=1&readonly=on',
    ])
      expect({ q, readOnly: asked(q) }).toEqual({ q, readOnly: true })
    for (const q of ['', 'readOnly=0', 'readonly=false', 'READONLY=No', 'readonly=off', 'read_only=1'])
      expect({ q, readOnly: asked(q) }).toEqual({ q, readOnly: false })
  })

  it('accepts no Origin, PUBLIC_BASE_URL’s and loopback ones, and nothing else', () => {
    const base = 'https://plan.example'
    expect(
      [
        null,
        'https://plan.example',
        'http://localhost:5173',
        'http://127.0.0.1',
        'http://[::1]:8080',
        'https://evil.example',
        'http://plan.example',
        'null',
      ].map((o) => originAllowed(o, base)),
    ).toEqual([true, true, true, true, true, false, false, false])
  })
})
