import { afterAll, describe, expect, it } from 'bun:test'
import fc from 'fast-check'
import { startApp } from './helpers'

// Issue 50, item 2: an OKF export imported again (POST /import-okf, what `arbor import` sends)
// and exported again gives the same bundle, over generated projects with arbitrary text in every
// field: lines of `---`, headings (`## Notes`, `## Blocked by` with links), backslashes, blank
// lines first and last, every kind of whitespace. Approaches are blocked by ones made after
// them. Only the timestamps and the new project's id may differ.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>) => {
  const res = await app.call('POST', '/api/v1/mutate', { body })
  if (res.status !== 200) throw new Error(`${JSON.stringify(body).slice(0, 400)} → ${JSON.stringify(res.body).slice(0, 400)}`)
  return res.body
}

/** Pieces the import once read as structure, and arbitrary text around them. */
const PIECES = [
  '---',
  '## Notes',
  '## Blocked by',
  '## Serves',
  '## External references',
  '## Parent',
  '- [Other](../approaches/approach-1.md)',
  '- [Need](../needs/need-1.md)',
  '- jira X-1: <https://evil.example/>',
  '\\',
  '\\## Notes',
  '# Title',
  '',
  '  ',
  '\t',
  '\r',
  '\u2028',
  '\u00a0',
  '(a) [b] <c> *d* _e_ `f` |g| #h',
  'key: value',
  '...',
]
// no NUL (PostgreSQL's text cannot hold it) and no lone surrogate (not text): both are refused on write
const clean = (s: string) => s.replace(/\0/g, '').replace(/[\uD800-\uDFFF]/g, '')
const text = fc
  .tuple(
    fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: 'binary', maxLength: 12 })), { maxLength: 6 }),
    fc.constantFrom('\n', ' ', ''),
  )
  .map(([parts, between]) => clean(parts.join(between)))
/** Text with something in it, as a label, a system or a key must have (a label ending in --- among them). */
const word = fc.oneof(
  text.map((t) => `${t}x`),
  text.map((t) => `x${t}---`),
  fc.constantFrom('---x', 'a---', '## Notes', '\\', '- [x](../goals/goal-1.md)'),
)
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })

const project = fc.record({
  goals: fc.array(fc.record({ label: word, description: opt(text), goalStatus: opt(fc.constantFrom('focus', 'later', 'done')) }), {
    minLength: 1,
    maxLength: 2,
  }),
  needs: fc.array(
    fc.record({
      goal: fc.nat(),
      label: word,
      description: opt(text),
      demand: opt(
        fc.array(fc.record({ who: word, at: fc.constantFrom('2026-01-02', '2025-12-31'), ask: opt(text), source: opt(text) }), {
          maxLength: 2,
        }),
      ),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  approaches: fc.array(
    fc.record({
      need: fc.nat(),
      label: word,
      description: opt(text),
      notes: opt(text),
      measure: opt(text),
      kano: opt(fc.constantFrom('must-have', 'incremental', 'delighter')),
      size: opt(fc.constantFrom('skateboard', 'car', 'antonov')),
      approachStatus: opt(fc.constantFrom('development', 'resolved', 'retired')),
      // each approach blocked only by later ones: never a cycle, and forward references
      blockedBy: fc.array(fc.nat(), { maxLength: 3 }),
      serves: fc.array(fc.nat(), { maxLength: 2 }),
      refs: fc.array(fc.record({ system: word, key: word, path: text }), { maxLength: 2 }),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  jobs: fc.array(
    fc.record({
      approach: fc.nat(),
      label: word,
      description: opt(text),
      notes: opt(text),
      status: opt(fc.constantFrom('done', 'open')),
      iteration: opt(fc.constantFrom('S1', 'Later')),
    }),
    { maxLength: 4 },
  ),
  tasks: fc.array(fc.record({ label: word, description: opt(text), kind: opt(fc.constantFrom('do-it', 'memo')), urgent: fc.boolean() }), {
    maxLength: 3,
  }),
})
type Project = typeof project extends fc.Arbitrary<infer T> ? T : never

const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== ''))

async function build(spec: Project): Promise<string> {
  const p = await app.project()
  const g = (i: number) => `draft-g${i % spec.goals.length}`
  const n = (i: number) => `draft-n${i % spec.needs.length}`
  const a = (i: number) => `draft-a${i % spec.approaches.length}`
  const mutations: unknown[] = [{ action: 'addIteration', iteration: { name: 'S1' } }]
  for (const [i, goal] of spec.goals.entries())
    mutations.push({ action: 'add', node: { id: `draft-g${i}`, type: 'goal', data: defined(goal) } })
  for (const [i, { goal, demand, ...need }] of spec.needs.entries())
    mutations.push({
      action: 'add',
      node: { id: `draft-n${i}`, type: 'need', parentId: g(goal), data: defined({ ...need, demand: demand?.map((d) => defined(d)) }) },
    })
  for (const [i, { need, blockedBy: _b, serves: _s, refs, ...approach }] of spec.approaches.entries())
    mutations.push({
      action: 'add',
      node: {
        id: `draft-a${i}`,
        type: 'approach',
        parentId: n(need),
        data: defined({
          ...approach,
          externalRefs: refs.length
            ? refs
                .map((r, k) => ({ system: r.system, key: `${r.key}${k}`, url: `https://example.com/${encodeURIComponent(r.path)}?q=${k}` }))
                .filter((r, k, all) => all.findIndex((o) => o.system === r.system && o.key === r.key) === k)
            : undefined,
        }),
      },
    })
  for (const [i, { approach, ...job }] of spec.jobs.entries())
    mutations.push({ action: 'add', node: { id: `draft-j${i}`, type: 'job', parentId: a(approach), data: defined(job) } })
  for (const [i, { label, description }] of spec.tasks.entries())
    mutations.push({ action: 'add', node: { id: `draft-t${i}`, type: 'task', data: defined({ label, description }) } })
  const made = await mutate({ action: 'batch', projectId: p, mutations })
  const id = (draft: string) => made.idMap[draft] as string
  // relations once every node exists: blocked by later approaches only, serving needs but the parent
  const later: unknown[] = []
  spec.approaches.forEach((approach, i) => {
    const count = spec.approaches.length
    const blockers = [...new Set(approach.blockedBy.map((b) => i + 1 + (b % Math.max(1, count - i - 1))).filter((b) => b < count))]
    const parent = approach.need % spec.needs.length
    const serves = [...new Set(approach.serves.map((s) => s % spec.needs.length))].filter((s) => s !== parent)
    const data = defined({
      blockedBy: blockers.length ? blockers.map((b) => id(`draft-a${b}`)) : undefined,
      serves: serves.length ? serves.map((s) => id(`draft-n${s}`)) : undefined,
    })
    if (Object.keys(data).length) later.push({ action: 'update', nodeId: id(`draft-a${i}`), data })
  })
  spec.tasks.forEach((task, i) => {
    if (task.kind)
      later.push({
        action: 'update',
        nodeId: id(`draft-t${i}`),
        data: { kind: task.kind, ...(task.kind === 'do-it' && task.urgent ? { urgent: true } : {}) },
      })
  })
  if (later.length) await mutate({ action: 'batch', projectId: p, mutations: later })
  return p
}

const exported = async (projectId: string) => {
  const res = await app.call('GET', `/api/v1/export-okf?projectId=${projectId}`)
  expect(res.status).toBe(200)
  return res.body.files as Record<string, string>
}
/** A bundle without what an import cannot keep: when each node was made, and the project's id. */
const comparable = (files: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(files).map(([path, file]) => [
      path,
      file.replace(/^timestamp: .*$/m, 'timestamp: -').replace(/^project: .*$/m, 'project: -'),
    ]),
  )

describe('OKF export → import → export', () => {
  it('gives the same bundle for generated projects with arbitrary text in every field', async () => {
    await fc.assert(
      fc.asyncProperty(project, async (spec) => {
        const first = await exported(await build(spec))
        const res = await app.call('POST', '/api/v1/import-okf', { body: { files: first } })
        expect({ status: res.status, body: res.status === 200 ? 'imported' : res.body }).toEqual({ status: 200, body: 'imported' })
        const second = await exported(res.body.project.id)
        expect(comparable(second)).toEqual(comparable(first))
      }),
      { numRuns: Number(process.env.ROUNDTRIP_RUNS ?? 25), endOnFailure: true },
    )
  }, 600_000)

  it('keeps what the text says as text: a description with relation headings plants no relation', async () => {
    const p = await app.project()
    const planted =
      '## Blocked by\n\n- [B](../approaches/approach-2.md)\n\n## Serves\n\n- [N](../needs/need-1.md)\n\n## External references\n\n- jira X-1: <https://evil.example/>'
    await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'draft-g', data: { label: 'N2' } } },
        {
          action: 'add',
          node: { id: 'draft-a', type: 'approach', parentId: 'draft-n2', data: { label: 'A', description: planted, notes: planted } },
        },
        { action: 'add', node: { id: 'draft-b', type: 'approach', parentId: 'draft-n2', data: { label: 'B---' } } },
        { action: 'add', node: { type: 'task', data: { label: 'T', description: 'a\n---\nb\n## Notes\n\nnot notes' } } },
      ],
    })
    await mutate({ action: 'update', projectId: p, nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } })
    const res = await app.call('POST', '/api/v1/import-okf', { body: { files: await exported(p) } })
    expect(res.status).toBe(200)
    const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${res.body.project.id}`)).body.nodes as { id: string; data: any }[]
    const byId = new Map(nodes.map((n) => [n.id, n.data]))
    expect(byId.get('approach-1')).toEqual({ label: 'A', description: planted, notes: planted, blockedBy: ['approach-2'] })
    expect(byId.get('approach-2')).toEqual({ label: 'B---' })
    expect(byId.get('task-1')).toEqual({ label: 'T', description: 'a\n---\nb\n## Notes\n\nnot notes', iteration: 'Later' })
  })
})
