import { expect } from 'bun:test'
import type { TestApp } from './helpers'

/**
 * A small plan for the workflow tests: goal-1 › need-1 › approach-1 › job-1, job-2, plus
 * approach-2 under need-1, and the given tasks. Returns the project id.
 */
export async function planProject(app: TestApp, opts: { tasks?: string[]; key?: string; id?: string } = {}): Promise<string> {
  const projectId = await app.project(opts.id, opts.key)
  const mutations: Record<string, unknown>[] = [
    { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Teams adopt the product' } } },
    { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Managers cannot see progress' } } },
    { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Weekly summary e-mail' } } },
    { action: 'add', node: { type: 'approach', parentId: 'draft-n', data: { label: 'Live dashboard' } } },
    { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'A manager receives the summary on Monday' } } },
    { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'The summary lists every finished job' } } },
    ...(opts.tasks ?? []).map((label) => ({ action: 'add', node: { type: 'task', data: { label } } })),
  ]
  const res = await app.call('POST', '/api/v1/mutate', { key: opts.key, body: { action: 'batch', projectId, mutations } })
  if (res.status !== 200) throw new Error(`planProject: ${res.status} ${JSON.stringify(res.body)}`)
  return projectId
}

/** POST /api/v1/workflow with the owner's key unless another is given. */
export function workflow(app: TestApp, body: Record<string, unknown>, key?: string | null) {
  return app.call('POST', '/api/v1/workflow', { body, key })
}

export async function nodes(app: TestApp, projectId: string) {
  const res = await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)
  return res.body.nodes as { id: string; type: string; parentId: string | null; data: Record<string, any> }[]
}

/** Each bad answer is a 400 {error, retry:true} that hands back the same state, so nothing is lost. */
export async function expectRetries(app: TestApp, projectId: string, state: string, cases: [unknown, string][]) {
  for (const [response, error] of cases) {
    const res = await workflow(app, { projectId, action: 'advance', state, response })
    expect({ status: res.status, error: res.body.error, retry: res.body.retry, same: res.body.state === state }).toEqual({
      status: 400,
      error,
      retry: true,
      same: true,
    })
  }
}

/**
 * The `add` flow run to its end on a planProject-shaped project (its first approach is
 * approach-1): started, then advanced with one drafted job labelled `label`, whose plan is applied.
 * Returns the terminal advance's answer. Takes an in-process app or a server process.
 */
export async function applyDraftedJob(
  on: { call: (method: string, path: string, opts?: { body?: unknown }) => Promise<{ status: number; body: any }> },
  projectId: string,
  label: string,
) {
  const started = await on.call('POST', '/api/v1/workflow', { body: { projectId, action: 'start', flow: 'add', input: 'CSV' } })
  if (started.status !== 200) throw new Error(`start: ${started.status} ${JSON.stringify(started.body)}`)
  const draft = { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label } }
  const response = { signal: 'draft_ready', message: 'Small enough.', draftNodes: [draft] }
  return on.call('POST', '/api/v1/workflow', { body: { projectId, action: 'advance', state: started.body.state, response } })
}
