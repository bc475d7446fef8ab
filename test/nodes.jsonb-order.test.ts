import { afterAll, describe, expect, it } from 'bun:test'
import { jsonbKeyOrder, jsonbOrdered } from '../src/db/jsonb-order'
import { startApp } from './helpers'

// A write keeps the nodes it inserted as it sent them, instead of reading them back
// (src/nodes/write.ts `flush`): their data must then be in the key order the database gives
// back (jsonb's), or an update later in the same write would name its change's fields in
// another order than a read would give (history.md, 2).
const app = await startApp()
afterAll(() => app.close())

/** The value as the database gives it back from a jsonb. */
const throughJsonb = async (value: unknown) => (await app.db.query<{ v: unknown }>('select $1::jsonb as v', [JSON.stringify(value)]))[0]!.v

/** A small deterministic generator (the same values on every run). */
function random(seed: number) {
  let s = seed
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    return s / 2 ** 32
  }
}
const ALPHABET = ['a', 'b', 'z', 'A', 'Z', '_', '0', '9', 'é', 'ß', 'ж', '中', '😀', ' ', '-']
function sample(next: () => number, depth: number): unknown {
  const pick = next()
  if (depth > 2 || pick < 0.3) return pick < 0.1 ? null : pick < 0.2 ? `s${Math.floor(next() * 100)}` : next() < 0.5
  if (pick < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => sample(next, depth + 1))
  const object: Record<string, unknown> = {}
  for (let i = Math.floor(next() * 7); i > 0; i--) {
    const key = Array.from({ length: 1 + Math.floor(next() * 4) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('')
    object[key] = sample(next, depth + 1)
  }
  return object
}

describe("jsonb's key order, kept by the app", () => {
  it('orders keys as jsonb gives them back, at every depth, keeping a value already in order', async () => {
    const values: unknown[] = [
      // a node's data as a client may send it: jsonb gives label, notes, description, externalRefs
      { notes: 'n', description: 'd', label: 'L', externalRefs: [{ url: 'https://x.test', key: 'K-1', system: 'jira' }] },
      { demand: [{ source: 's', ask: 'a' }], label: 'N' },
      { b: 1, a: 2, aa: 3, B: 4, é: 5, e: 6, '😀': 7, 中: 8, '10': 9, '9': 10, '': 11 },
      { label: 'x', gone: undefined, list: [1, undefined, { y: 1, x: 2 }] },
      [{ zz: { b: [], a: {} } }, 'text', 0],
    ]
    const next = random(51)
    for (let i = 0; i < 300; i++) values.push(sample(next, 0))
    for (const value of values) expect(JSON.stringify(jsonbOrdered(value))).toBe(JSON.stringify(await throughJsonb(value)))
    const ordered = { label: 'L', notes: 'n', externalRefs: [{ key: 'k', url: 'u', system: 's' }] }
    expect(jsonbOrdered(ordered)).toBe(ordered)
    const sent = { notes: 'n', label: 'L' }
    expect(Object.keys(jsonbOrdered(sent))).toEqual(['label', 'notes'])
    expect(Object.keys(sent)).toEqual(['notes', 'label']) // the value given is left as it is
  })

  it('compares keys by the length of their UTF-8, then by its bytes', () => {
    expect(['bb', 'a', 'é', 'b', 'ab', 'z'].sort(jsonbKeyOrder)).toEqual(['a', 'b', 'z', 'ab', 'bb', 'é'])
    expect(['中', 'abc', '😀', 'abcd'].sort(jsonbKeyOrder)).toEqual(['abc', '中', 'abcd', '😀'])
  })

  // a client's order of data's keys that is not jsonb's, with a reference whose keys are not either
  const data = { description: 'd', notes: 'n', label: 'L', externalRefs: [{ url: 'https://x.test', key: 'K-1', system: 'jira' }] }
  // the update sends the reference again with its keys in another order: no change of it
  const patch = { description: 'd2', notes: 'n2', externalRefs: [{ system: 'jira', key: 'K-1', url: 'https://x.test' }] }
  /** The fields of every update of project `p`, oldest first. */
  const updateFields = async (p: string) => {
    const res = await app.call('GET', `/api/v1/history?projectId=${p}`)
    expect(res.status).toBe(200)
    return res.body.changes
      .filter((c: any) => c.action === 'update')
      .reverse()
      .map((c: any) => c.fields)
  }
  const mutate = async (body: unknown) => {
    const res = await app.call('POST', '/api/v1/mutate', { body })
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`)
    return res.body
  }
  /** A project with goal > need > approach: the approach's id. */
  const tree = async (p: string) =>
    (
      await mutate({
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        ],
      })
    ).idMap['draft-a'] as string

  it("names an update's fields in a batch as separate writes do, after an add of the same batch", async () => {
    const apart = await app.project()
    const other = await tree(apart)
    const single = await mutate({ action: 'add', projectId: apart, node: { type: 'job', parentId: other, data } })
    const updated = await mutate({ action: 'update', projectId: apart, nodeId: single.node.id, data: patch })
    // jsonb's order (label, notes, description, externalRefs), and the reference unchanged
    expect(await updateFields(apart)).toEqual([['notes', 'description']])

    // the update reads the node its add stored earlier in the batch (j1: the first update
    // stored the batch's adds), and the node just added (j2: not stored yet)
    const together = await app.project()
    const approach = await tree(together)
    const batch = await mutate({
      action: 'batch',
      projectId: together,
      mutations: [
        { action: 'add', node: { id: 'draft-j1', type: 'job', parentId: approach, data } },
        { action: 'add', node: { id: 'draft-j2', type: 'job', parentId: approach, data } },
        { action: 'update', nodeId: 'draft-j2', data: patch },
        { action: 'update', nodeId: 'draft-j1', data: patch },
      ],
    })
    expect(await updateFields(together)).toEqual([
      ['notes', 'description'],
      ['notes', 'description'],
    ])
    // each update's node answered as the single update answers it, keys in the same order
    for (const i of [2, 3]) expect(JSON.stringify(batch.results[i].node.data)).toBe(JSON.stringify(updated.node.data))
    // an add's node and its change keep the client's order (as a single add's do)
    expect(Object.keys(batch.results[0].node.data)).toEqual(Object.keys(single.node.data))
  })
})
