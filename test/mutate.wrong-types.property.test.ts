import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { startApp, type TestApp } from './helpers'

/**
 * Issue 28: batches whose entries carry a value of every wrong JSON type (or a string no handler
 * may see) at any place of an otherwise valid entry. Every answer is JSON; a refusal is a 400
 * whose every message names the entry it is about (`mutations[<i>]…`); nothing is a 5xx.
 */
let app: TestApp
let p: string
beforeAll(async () => {
  app = await startApp()
  p = await app.project()
  const seeded = await app.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Approach' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'Job' } } },
        { action: 'add', node: { type: 'task', data: { label: 'Task' } } },
      ],
    },
  })
  expect(seeded.status).toBe(200)
})
afterAll(() => app.close())

/** Valid entries of each action; the property breaks one place of one of them. */
const TEMPLATES: Record<string, unknown>[] = [
  {
    action: 'add',
    node: { id: 'draft-x', type: 'job', parentId: 'approach-1', data: { label: 'New job', iteration: 'Later', size: 'car' } },
  },
  { action: 'add', node: { type: 'need', parentId: 'goal-1', data: { label: 'New need', description: 'why' } } },
  { action: 'add', node: { type: 'approach', parentId: 'need-1', data: { label: 'Another way', blockedBy: ['approach-1'] } } },
  {
    action: 'add',
    node: { type: 'task', data: { label: 'New task', notes: 'n', externalRefs: [{ system: 'gh', key: '1', url: 'https://x.test' }] } },
  },
  { action: 'update', nodeId: 'job-1', data: { label: 'Renamed', status: 'done' } },
  { action: 'update', nodeId: 'need-1', parentId: 'goal-1', data: { description: 'd' } },
  { action: 'delete', nodeId: 'task-999' },
  { action: 'addIteration', iteration: { name: 'Sprint', gitTags: ['v1'] } },
]
/** Iteration names are unique: each run's addIteration gets its own. */
let runs = 0
const fresh = (entry: Record<string, any>) =>
  entry.action === 'addIteration' && entry.iteration?.name === 'Sprint'
    ? { ...entry, iteration: { ...entry.iteration, name: `Sprint ${++runs}` } }
    : entry

/** Every JSON type, and the strings no handler may see. */
const WRONG = fc.constantFrom<unknown>(
  0,
  -1,
  1.5,
  1e300,
  true,
  false,
  null,
  '',
  'x',
  {},
  { a: 1 },
  [],
  ['x'],
  [1],
  'a\u0000b',
  '\ud800',
  'b\udfff',
)

/** Every path (list of keys) to a value inside `value`, the root excluded. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...at, i], ...paths(v, [...at, i])])
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [[...at, k], ...paths(v, [...at, k])])
  return []
}

function replaced(value: unknown, path: (string | number)[], by: unknown): unknown {
  if (!path.length) return by
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
  copy[path[0]!] = replaced(copy[path[0]!], path.slice(1), by)
  return copy
}

const broken = fc
  .record({ template: fc.nat({ max: TEMPLATES.length - 1 }), pick: fc.nat(), by: WRONG, extra: fc.boolean() })
  .map(({ template, pick, by, extra }) => {
    const t = TEMPLATES[template]!
    const all = paths(t)
    // `extra`: an unknown key, else a value replaced at one of the entry's places
    return fresh(extra ? { ...t, [`x${pick % 3}`]: by } : (replaced(t, all[pick % all.length]!, by) as Record<string, any>))
  })
/** One broken entry among valid ones, so the broken one is what the batch answers about. */
const batchOf = fc
  .record({ broken, before: fc.nat({ max: 1 }), after: fc.nat({ max: 1 }) })
  .map(({ broken, before, after }) => [
    ...Array.from({ length: before }, () => fresh(TEMPLATES[7]!)),
    broken,
    ...Array.from({ length: after }, () => TEMPLATES[1]!),
  ])

describe('batch entries with values of every wrong JSON type', () => {
  it('never answer 5xx, and every 400 names its entry', async () => {
    await fc.assert(
      fc.asyncProperty(batchOf, async (mutations) => {
        const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId: p, mutations } })
        expect(res.headers.get('content-type')).toStartWith('application/json')
        expect(res.status).toBeLessThan(500)
        if (res.status === 400) for (const error of res.body.errors as string[]) expect(error).toMatch(/^mutations\[\d+\]/)
        else expect([200, 404]).toContain(res.status)
      }),
      { numRuns: 150, seed: 28 },
    )
  }, 120_000)

  it('never answer 5xx for the same values in a single add or update', async () => {
    await fc.assert(
      fc.asyncProperty(broken, async (entry) => {
        const e = entry as Record<string, unknown>
        if (e.action !== 'add' && e.action !== 'update') return
        const res = await app.call('POST', '/api/v1/mutate', { body: { ...e, projectId: p } })
        expect(res.headers.get('content-type')).toStartWith('application/json')
        expect(res.status).toBeLessThan(500)
      }),
      { numRuns: 100, seed: 28 },
    )
  }, 120_000)
})
