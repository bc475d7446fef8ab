import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { startFakeModel } from './llm-fake'
import { type ServerProcess, startServer } from './process'

// The workflow demo (bun run workflow:demo) as a user runs it: its own process, talking to the
// real Arbor process and to a scripted model server over HTTP.
const ROOT = join(import.meta.dir, '..')
let server: ServerProcess
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server.close())

async function project(mutations: Record<string, unknown>[]) {
  const id = `demo-${Math.random().toString(36).slice(2, 8)}`
  expect((await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: id, id } } })).status).toBe(200)
  expect((await server.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId: id, mutations } })).status).toBe(200)
  return id
}

const PLAN = [
  { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Teams adopt the product' } } },
  { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Managers cannot see progress' } } },
  { action: 'add', node: { type: 'approach', parentId: 'draft-n', data: { label: 'Weekly summary e-mail' } } },
]

async function runDemo(args: string[], llmUrl: string) {
  const proc = Bun.spawn([process.execPath, 'run', 'workflow:demo', '--', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ARBOR_API_URL: `${server.url}/api/v1`,
      ARBOR_API_KEY: server.ownerKey,
      LLM_URL: llmUrl,
      LLM_MODEL: 'scripted-1',
      LLM_API_KEY: 'sk-test',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

describe('bun run workflow:demo', () => {
  it('drives the add flow with a chat model: classified, confirmed, a refused draft fed back, a fenced corrected draft applied', async () => {
    const projectId = await project(PLAN)
    const model = startFakeModel([
      JSON.stringify({
        signal: 'classified',
        message: 'A job under the weekly summary.',
        context: { type: 'job', parentId: 'approach-1' },
      }),
      JSON.stringify({ signal: 'confirmed', message: 'Placement agreed.' }),
      JSON.stringify({
        signal: 'draft_ready',
        message: 'One job.',
        draftNodes: [{ id: 'draft-1', type: 'job', parentId: 'need-1', data: { label: 'CSV' } }],
      }),
      `Here it is:\n\`\`\`json\n${JSON.stringify({
        signal: 'draft_ready',
        message: 'One job.',
        draftNodes: [{ id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'A manager downloads the summary as CSV' } }],
      })}\n\`\`\``,
    ])
    try {
      const out = await runDemo(['--project', projectId, '--flow', 'add', '--input', 'Export the weekly summary as CSV'], model.url)
      // bun run echoes the command on stderr; the demo itself writes there only when it fails
      expect({ code: out.code, failed: out.stderr.includes('workflow-demo:') }).toEqual({ code: 0, failed: false })
      expect(out.stdout).toContain("refused: draftNodes[0]: A job's parent must be an approach; need-1 is a need")
      const last = JSON.parse(out.stdout.trim().split('\n').at(-1)!)
      expect(last).toEqual({
        changeset: [
          {
            action: 'add',
            nodeId: 'job-1',
            type: 'job',
            before: null,
            after: {
              id: 'job-1',
              rev: expect.any(String),
              type: 'job',
              parentId: 'approach-1',
              data: { label: 'A manager downloads the summary as CSV', iteration: 'Later' },
            },
          },
        ],
        focus: 'job-1',
        viewCommand: { projectId, command: { type: 'selectNode', nodeId: 'job-1' } },
      })
      expect(model.requests).toHaveLength(4)
      expect(model.requests.every((r) => r.model === 'scripted-1')).toBe(true)
      expect(model.requests[0]!.messages[1]!.content).toContain('Export the weekly summary as CSV')
      expect(model.requests[3]!.messages.at(-1)!.content).toStartWith(
        "Arbor refused that answer: draftNodes[0]: A job's parent must be an approach",
      )
      const nodes = await server.call('GET', `/api/v1/nodes?projectId=${projectId}&type=job`)
      expect(nodes.body.nodes.map((n: any) => n.data.label)).toEqual(['A manager downloads the summary as CSV'])
      const outline = await server.call('GET', `/api/v1/tree?projectId=${projectId}&format=outline&budget=1000`)
      expect(outline.body.outline.split('\n').at(-1)).toBe(
        '      - job-1 "A manager downloads the summary as CSV" [open, iteration: Later]',
      )
    } finally {
      model.stop()
    }
  })

  it('drives task-curate with --yes and phase-assign to the end', async () => {
    const projectId = await project([
      ...PLAN,
      { action: 'add', node: { type: 'job', parentId: 'approach-1', data: { label: 'Summary arrives on Monday' } } },
      { action: 'add', node: { type: 'task', data: { label: 'Old note' } } },
      { action: 'add', node: { type: 'task', data: { label: 'Keep' } } },
    ])
    const model = startFakeModel([
      JSON.stringify({ signal: 'draft_ready', message: 'Discard the old note.', actions: [{ taskId: 'task-1', action: 'discard' }] }),
      JSON.stringify({ signal: 'draft_ready', message: 'One phase.', phases: [{ name: 'Later', jobIds: ['job-1'] }] }),
      JSON.stringify({ signal: 'draft_ready', message: 'One phase.', phases: [{ name: 'Managers see progress', jobIds: ['job-1'] }] }),
    ])
    try {
      const curate = await runDemo(['--project', projectId, '--flow', 'task-curate', '--yes'], model.url)
      expect(curate.code).toBe(0)
      expect(JSON.parse(curate.stdout.trim().split('\n').at(-1)!).changeset.map((c: any) => `${c.action} ${c.nodeId}`)).toEqual([
        'delete task-1',
      ])
      const phases = await runDemo(['--project', projectId, '--flow', 'phase-assign', '--yes'], model.url)
      expect(phases.code).toBe(0)
      expect(phases.stdout).toContain('refused: phases[0].name "Later" describes no user value')
      const iterations = await server.call('GET', `/api/v1/iterations?projectId=${projectId}`)
      expect(iterations.body.iterations.map((i: any) => i.name)).toEqual(['Later', 'Managers see progress'])
      const job = await server.call('GET', `/api/v1/nodes?projectId=${projectId}&type=job`)
      expect(job.body.nodes[0].data.iteration).toBe('Managers see progress')
    } finally {
      model.stop()
    }
  })
})
