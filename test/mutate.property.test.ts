import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { startApp, type TestApp } from './helpers'

/**
 * Property tests of the write rules (issue 10): random sequences of valid and invalid mutations,
 * sent through HTTP, never leave the tree breaking an invariant, and every refusal is a 4xx.
 * Runs are bounded so the file stays well under a minute on a loaded two-core machine.
 */
let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const TYPES = ['goal', 'need', 'approach', 'job', 'task'] as const
const PARENT: Record<string, string | null> = { goal: null, need: 'goal', approach: 'need', job: 'approach', task: null }

/** An id from the tree so far (by index), a draft id of this batch, a bogus one, or none. */
const ref = fc.oneof(
  fc.nat({ max: 40 }).map((i) => ({ existing: i })),
  fc.constantFrom('draft-a', 'draft-b', 'goal-999', 'need-1', 'job-0', 'constructor', '__proto__').map((id) => ({ literal: id })),
  fc.constant(null),
)
const label = fc.oneof(fc.string({ maxLength: 12 }), fc.constant(''), fc.constant(42 as unknown as string))
const data = fc.record(
  {
    label,
    status: fc.constantFrom('done', 'open', null, 'delivered', 'nope'),
    kano: fc.constantFrom('must-have', 'performance', 'bogus'),
    size: fc.constantFrom('car', 'bike'),
    iteration: fc.constantFrom('Later', 'Missing'),
  },
  { requiredKeys: ['label'] },
)
const add = fc.record({
  kind: fc.constant('add' as const),
  type: fc.constantFrom(...TYPES, 'bogus'),
  parent: ref,
  data,
  draft: fc.constantFrom(undefined, 'draft-a', 'draft-b'),
})
const update = fc.record({ kind: fc.constant('update' as const), target: ref, parent: fc.option(ref), data })
const remove = fc.record({ kind: fc.constant('delete' as const), target: ref })
const entry = fc.oneof(add, update, remove)
const step = fc.oneof(
  { weight: 3, arbitrary: entry.map((e) => ({ single: e })) },
  { weight: 2, arbitrary: fc.array(entry, { minLength: 1, maxLength: 6 }).map((es) => ({ batch: es })) },
)

type Node = { id: string; type: string; parentId: string | null; data: Record<string, any> }

async function nodesOf(projectId: string): Promise<Node[]> {
  const res = await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)
  expect(res.status).toBe(200)
  return res.body.nodes
}

function resolve(r: any, nodes: Node[]): string | null | undefined {
  if (r === null || r === undefined) return r
  if ('literal' in r) return r.literal
  return nodes.length ? nodes[r.existing % nodes.length]!.id : 'goal-1'
}

function body(e: any, nodes: Node[]) {
  if (e.kind === 'add') {
    const node: Record<string, unknown> = { type: e.type, data: e.data }
    const parentId = resolve(e.parent, nodes)
    if (parentId !== null) node.parentId = parentId
    if (e.draft) node.id = e.draft
    return { action: 'add', node }
  }
  if (e.kind === 'update') {
    const out: Record<string, unknown> = { action: 'update', nodeId: resolve(e.target, nodes), data: e.data }
    if (e.parent !== null) out.parentId = resolve(e.parent, nodes)
    return out
  }
  return { action: 'delete', nodeId: resolve(e.target, nodes) }
}

function checkInvariants(nodes: Node[]) {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  expect(byId.size).toBe(nodes.length) // ids are unique
  for (const n of nodes) {
    expect(n.id).toMatch(/^(goal|need|approach|job|task)-[1-9]\d*$/) // draft ids never survive
    expect(n.id.startsWith(`${n.type}-`)).toBe(true)
    const wanted = PARENT[n.type]
    if (wanted === null) expect(n.parentId).toBeNull()
    else expect(byId.get(n.parentId!)?.type).toBe(wanted!) // the parent exists and has the right type
    expect(typeof n.data.label === 'string' && n.data.label.length > 0).toBe(true)
    if (n.data.status !== undefined) expect(['done', 'delivered']).toContain(n.data.status)
    if (n.data.status === 'done' && (n.type === 'job' || n.type === 'task')) expect(n.data.completedAt).toEqual(expect.any(String))
    if (n.data.status !== 'done') expect(n.data.completedAt).toBeUndefined()
  }
}

describe('random mutation sequences', () => {
  it('never break a tree invariant; every refusal is a 4xx; a refused batch writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const projectId = await app.project()
        for (const s of steps) {
          const before = await nodesOf(projectId)
          const request =
            'single' in s
              ? { ...body(s.single, before), projectId }
              : { action: 'batch', projectId, mutations: s.batch.map((e) => body(e, before)) }
          const res = await app.call('POST', '/api/v1/mutate', { body: request })
          expect(res.status === 200 || (res.status >= 400 && res.status < 500)).toBe(true)
          const after = await nodesOf(projectId)
          checkInvariants(after)
          if (res.status !== 200) expect(after).toEqual(before) // atomic: a refused write changes nothing
          if (res.status === 200 && 'batch' in s) {
            // every draft id of the batch maps to a real node that exists now (or was deleted later in it)
            for (const real of Object.values(res.body.idMap ?? {})) expect(String(real)).toMatch(/^(goal|need|approach|job|task)-\d+$/)
          }
        }
      }),
      { numRuns: 40, seed: 4242, endOnFailure: true },
    )
  }, 120_000)
})
