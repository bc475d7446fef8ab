// A typed client of the Arbor API: openapi-fetch over the types openapi-typescript generated from
// /openapi.json (generated/arbor.ts; regenerate with `npm run client:generate`). Every path,
// parameter, request body and answer below is checked by the compiler against the API document:
// a misspelt action, a missing projectId or a wrong field fails `tsc`, not the request.
//   ARBOR_API_URL=http://localhost:3000 ARBOR_API_KEY=arb_… bun examples/typed-client/example.ts
import createClient from 'openapi-fetch'
import type { paths } from './generated/arbor'

/** A client for one server and one key. */
export function arborClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } })
}

/** Create a project with a goal and a need under it, then list projects and the project's nodes. */
export async function demo(client: ReturnType<typeof arborClient>, projectId: string) {
  const project = await client.POST('/api/v1/mutate', {
    body: { action: 'addProject', project: { id: projectId, name: 'Typed client demo' } },
  })
  if (!project.data) throw new Error(`addProject: ${project.response.status} ${JSON.stringify(project.error)}`)

  const goal = await client.POST('/api/v1/mutate', {
    body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'Customers pay by direct debit' } } },
  })
  if (!goal.data || !('node' in goal.data)) throw new Error(`add goal: ${goal.response.status} ${JSON.stringify(goal.error)}`)
  const goalId = goal.data.node.id

  // a need under the goal; `{ type: 'task', parentId: goalId }` would not compile (a task has no parent)
  const need = await client.POST('/api/v1/mutate', {
    body: { action: 'add', projectId, node: { type: 'need', parentId: goalId, data: { label: 'Collect SEPA mandates' } } },
  })
  if (!need.data) throw new Error(`add need: ${need.response.status} ${JSON.stringify(need.error)}`)

  const projects = await client.GET('/api/v1/projects')
  if (!projects.data) throw new Error(`listProjects: ${projects.response.status} ${JSON.stringify(projects.error)}`)

  const nodes = await client.GET('/api/v1/nodes', { params: { query: { projectId } } })
  if (!nodes.data) throw new Error(`listNodes: ${nodes.response.status} ${JSON.stringify(nodes.error)}`)

  return {
    projects: projects.data.projects.map((p) => p.id),
    nodes: nodes.data.nodes.map((n) => ({ id: n.id, type: n.type, parentId: n.parentId, label: n.data.label })),
  }
}

if (import.meta.main) {
  const url = process.env.ARBOR_API_URL ?? 'http://localhost:3000'
  const key = process.env.ARBOR_API_KEY
  if (!key) throw new Error('ARBOR_API_KEY is not set (the owner key is printed on the first start)')
  const projectId = process.argv[2] ?? `typed-client-${Date.now().toString(36)}`
  console.log(JSON.stringify(await demo(arborClient(url, key), projectId)))
}
