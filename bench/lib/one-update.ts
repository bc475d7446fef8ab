import type { ChangeDraft } from '../../src/history/model'
import type { Actor } from '../../src/ports/actor'
import type { BenchServer } from './app'

/**
 * A project `bench` added on `server`, and one update of a goal's label as the saving step gets
 * it: its author, its change and its event (bench/history-insert.ts, bench/stmt-cost.ts).
 */
export async function oneUpdate(server: BenchServer) {
  const res = await fetch(`${server.url}/api/v1/mutate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.ownerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'addProject', project: { name: 'Bench', id: 'bench' } }),
  })
  if (res.status !== 200) throw new Error(`addProject: ${res.status}`)
  const actor: Actor = { userId: null, userName: 'bench', keyId: null, via: 'api' }
  const state = (label: string) => ({ parentId: null, data: { label } })
  const draft: ChangeDraft = {
    action: 'update',
    kind: 'node',
    id: 'goal-1',
    type: 'goal',
    before: state('a'),
    after: state('b'),
    fields: ['label'],
  }
  const node = { id: 'goal-1', type: 'goal', ...state('b') }
  const event = {
    type: 'node.updated',
    payload: { event: 'node.updated', project_id: 'bench', timestamp: new Date().toISOString(), node, actor },
  }
  return { actor, draft, event }
}
