/**
 * npm run mcp:transcript — an agent-style session through the MCP server, written to
 * docs/mcp-transcript.md: search → get_tree context → mutate batch → run_workflow start and
 * advance (→ set_view with the result's viewCommand when the canvas endpoints exist).
 *
 * It starts a real Arbor (`bun src/main.ts`, throw-away in-memory database, a free port), seeds a
 * small plan through the REST API, then talks to `bun run mcp` over stdio with the SDK's client,
 * as a desktop MCP client does. The model's answers are written out here, as an agent would send.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CallToolResult, Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { loadConfig } from '../src/config'
import { serverEnv } from './lib/harness'

const ROOT = join(import.meta.dir, '..')
const OUT = join(ROOT, 'docs/mcp-transcript.md')

async function startArbor() {
  const proc = Bun.spawn([process.execPath, 'src/main.ts'], {
    cwd: ROOT,
    env: serverEnv({
      DATABASE_URL: 'memory://',
      PUBLIC_BASE_URL: 'http://localhost:3000',
      EMBEDDINGS_MODEL_DIR: loadConfig({ DATA_DIR: join(ROOT, 'data') }).embeddingsModelDir,
    }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const reader = proc.stdout.getReader()
  const deadline = Date.now() + 60_000
  for (;;) {
    const url = /"msg":"listening".*?"url":"(http:\/\/[^"]+)"/.exec(out)?.[1]
    const key = /Arbor API key for owner: (arb_[0-9A-Za-z]+)/.exec(out)?.[1]
    if (url && key) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })()
      return { url, key, stop: () => proc.kill('SIGTERM') }
    }
    if (Date.now() > deadline) throw new Error(`arbor did not start:\n${out}`)
    const { value, done } = await reader.read()
    if (done) throw new Error(`arbor exited:\n${out}${await new Response(proc.stderr).text()}`)
    out += new TextDecoder().decode(value)
  }
}

/** Long strings (prompts, states) clipped for reading; everything else as returned. */
function clip(value: unknown): unknown {
  if (typeof value === 'string' && value.includes(ROOT)) return clip(value.replaceAll(ROOT, '<checkout>'))
  if (typeof value === 'string' && value.length > 600) return `${value.slice(0, 600)}… (${value.length - 600} more characters)`
  if (Array.isArray(value)) return value.map(clip)
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clip(v)]))
  return value
}

const arbor = await startArbor()
const lines: string[] = []
try {
  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(arbor.url + path, {
      method,
      headers: { authorization: `Bearer ${arbor.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as any
  }
  const projectId = 'team-dashboard'
  await rest('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Team dashboard', id: projectId } })
  await rest('POST', '/api/v1/mutate', {
    action: 'batch',
    projectId,
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Teams adopt the product', goalStatus: 'focus' } } },
      {
        action: 'add',
        node: { id: 'draft-n1', type: 'need', parentId: 'draft-g', data: { label: 'Managers cannot see what the team shipped' } },
      },
      {
        action: 'add',
        node: { id: 'draft-n2', type: 'need', parentId: 'draft-g', data: { label: 'New members take weeks to find their way' } },
      },
      {
        action: 'add',
        node: {
          id: 'draft-a1',
          type: 'approach',
          parentId: 'draft-n1',
          data: { label: 'Weekly summary e-mail', kano: 'must-have', size: 'vespa' },
        },
      },
      {
        action: 'add',
        node: { type: 'job', parentId: 'draft-a1', data: { label: 'A manager receives a summary of merged work every Monday' } },
      },
      { action: 'add', node: { type: 'approach', parentId: 'draft-n2', data: { label: 'Guided first week checklist' } } },
    ],
  })
  // the search index follows writes asynchronously; wait until the seed is searchable
  for (let i = 0; i < 100; i++) {
    const { results } = await rest('GET', `/api/v1/search?projectId=${projectId}&q=weekly%20summary`)
    if (results.length) break
    await Bun.sleep(100)
  }

  const client = new Client({ name: 'transcript-agent', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['run', 'mcp'],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ARBOR_API_KEY: arbor.key,
        ARBOR_API_URL: `${arbor.url}/api/v1`,
        ARBOR_PROJECT_ID: projectId,
      },
    }),
  )
  const { tools } = await client.listTools()
  lines.push(
    '# MCP transcript: an agent-style session',
    '',
    'Written by `npm run mcp:transcript` (bench/mcp-transcript.ts): a real Arbor on a throw-away',
    'database, a small seeded plan, and the SDK client talking to `bun run mcp` over stdio with',
    `\`ARBOR_PROJECT_ID=${projectId}\`. The model's answers in the workflow steps are the agent's;`,
    'prompts and states longer than 600 characters are clipped here.',
    '',
    `tools/list: ${tools.map((t) => `\`${t.name}\``).join(', ')}; its size in tokens is in`,
    'bench/README.md (`npm run bench:mcp`).',
    '',
  )

  let step = 0
  const call = async (name: string, args: Record<string, unknown>, why: string) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult
    const body = JSON.parse((result.content[0] as { text: string }).text)
    lines.push(
      `## ${++step}. \`${name}\`${result.isError ? ' (tool error)' : ''}`,
      '',
      why,
      '',
      '```json',
      JSON.stringify(args, null, 2),
      '```',
      '',
      '<details open><summary>result</summary>',
      '',
      '```json',
      JSON.stringify(clip(body), null, 2),
      '```',
      '',
      '</details>',
      '',
    )
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(body)}`)
    return body
  }

  const found = await call(
    'search',
    { q: 'show managers what the team delivered', limit: 3 },
    'The user asks for a CSV export of the weekly summary. The agent first looks for where that belongs.',
  )
  const hit = found.results[0].node
  const context = await call(
    'get_tree',
    { nodeId: hit.id, direction: 'context' },
    `The best hit is ${hit.id}; the agent reads its context (ancestors, siblings, subtree) before writing.`,
  )
  const approach = [hit, ...(context.ancestors ?? []), ...(context.children ?? [])].find((n: any) => n.type === 'approach')
  if (!approach) throw new Error(`no approach around ${hit.id}`)
  await call(
    'mutate',
    {
      action: 'batch',
      idempotencyKey: 'transcript-batch-1',
      mutations: [
        { action: 'addIteration', iteration: { name: 'Reporting v1' } },
        {
          action: 'add',
          node: {
            type: 'job',
            parentId: approach.id,
            data: { label: 'The summary links each item to its pull request', iteration: 'Reporting v1' },
          },
        },
        {
          action: 'add',
          node: {
            type: 'job',
            parentId: approach.id,
            data: { label: 'A manager can unsubscribe from the summary in one click', iteration: 'Reporting v1' },
          },
        },
      ],
    },
    'It adds an iteration and two jobs in one batch, with an idempotency key so a retry cannot write them twice.',
  )
  const started = await call(
    'run_workflow',
    { action: 'start', flow: 'add', input: 'Managers want to download the weekly summary as CSV' },
    'For the CSV idea itself the agent runs the guided `add` flow: Arbor returns a prompt for the agent’s own model.',
  )
  const classified = await call(
    'run_workflow',
    {
      action: 'advance',
      state: started.state,
      response: {
        signal: 'classified',
        message: `A job under "${approach.data.label}".`,
        context: { type: 'job', parentId: approach.id },
      },
    },
    'The model classifies the idea; the state goes back verbatim.',
  )
  const done = await call(
    'run_workflow',
    {
      action: 'advance',
      state: classified.state,
      response: {
        signal: 'draft_ready',
        message: 'One job: the CSV download.',
        draftNodes: [
          {
            id: 'draft-1',
            type: 'job',
            parentId: approach.id,
            data: { label: 'A manager downloads the weekly summary as CSV', iteration: 'Reporting v1' },
          },
        ],
      },
    },
    'The model drafts the node; a valid `draft_ready` is terminal and Arbor applies it.',
  )
  const probe = await fetch(`${arbor.url}/api/v1/view-state?projectId=${projectId}`, {
    headers: { authorization: `Bearer ${arbor.key}` },
  })
  if (probe.status !== 404)
    await call(
      'set_view',
      done._meta.viewCommand,
      'Finally it shows the user the new job on the canvas, sending the viewCommand unchanged.',
    )
  await client.close()
  writeFileSync(OUT, `${lines.join('\n')}`)
  console.log(`wrote ${OUT} (${step} calls)`)
} finally {
  arbor.stop()
}
