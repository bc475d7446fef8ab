// Mistakes the generated types must refuse at compile time. Each @ts-expect-error line fails the
// compile if the types would accept the line after it (`tsc --noEmit -p examples/typed-client`,
// run by CI), so this file proves the client is typed, not merely that it compiles.
import type { arborClient } from './example'
import type { operations } from './generated/arbor'

type Client = ReturnType<typeof arborClient>
type MutateBody = operations['mutate']['requestBody']['content']['application/json']

export async function refusedAtCompileTime(client: Client) {
  // @ts-expect-error listNodes needs projectId
  await client.GET('/api/v1/nodes', { params: { query: {} } })
  // @ts-expect-error no such path
  await client.GET('/api/v1/node')
  // @ts-expect-error no such action
  const misspelt: MutateBody = { action: 'addd', projectId: 'p' }
  // @ts-expect-error a task has no parent
  const orphan: MutateBody = { action: 'add', projectId: 'p', node: { type: 'task', parentId: 'goal-1', data: { label: 'x' } } }
  // @ts-expect-error a node needs a label
  const unlabelled: MutateBody = { action: 'add', projectId: 'p', node: { type: 'goal', data: {} } }
  const nodes = await client.GET('/api/v1/nodes', { params: { query: { projectId: 'p' } } })
  // @ts-expect-error the answer's nodes have no `title`
  const title = nodes.data?.nodes[0]?.title
  return [misspelt, orphan, unlabelled, title]
}
