import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import fc from 'fast-check'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import type { Node } from '../src/nodes/model'
import { OutlineResponse } from '../src/tree/routes'
import { renderTokenOutline } from '../src/tree/token-outline'
import { startApp, type TestApp } from './helpers'
import { planProject } from './workflow-fixtures'

// GET /api/v1/outline (agents-and-app.md, section 4): a project as indented markdown within a budget of o200k_base tokens
const plain = { disallowedSpecial: new Set<string>() }
const count = (text: string) => countTokens(text, plain)

const n = (id: string, parentId: string | null, data: Record<string, unknown> = {}): Node => ({
  id,
  type: id.split('-')[0] as Node['type'],
  parentId,
  data: { label: `Label ${id}`, ...data },
})

const plan: Node[] = [
  n('goal-1', null, { goalStatus: 'focus', description: 'Why it matters.' }),
  n('need-1', 'goal-1'),
  n('approach-1', 'need-1', { approachStatus: 'development', size: 'car' }),
  n('job-1', 'approach-1', { status: 'done', iteration: 'Sprint 1' }),
  n('job-2', 'approach-1', { iteration: 'Sprint 1', description: 'Send it on\nMonday.' }),
  n('approach-2', 'need-1', { approachStatus: 'resolved' }),
  n('job-3', 'approach-2', { status: 'done', iteration: 'Sprint 1' }),
  n('task-1', null, { kind: 'do-it', urgent: true, iteration: 'Later' }),
]

/** A project of `goals` goals, each with 5 needs of 5 approaches of 9 jobs (a third done), and `tasks` tasks. */
function bigPlan(goals: number, tasks: number): Node[] {
  const out: Node[] = []
  let job = 0
  for (let g = 1; g <= goals; g++) {
    out.push(n(`goal-${g}`, null, { description: 'A goal with a reason.' }))
    for (let i = 1; i <= 5; i++) {
      const need = `need-${g * 10 + i}`
      out.push(n(need, `goal-${g}`))
      for (let a = 1; a <= 5; a++) {
        const approach = `approach-${(g * 10 + i) * 10 + a}`
        out.push(n(approach, need, { approachStatus: a === 5 ? 'resolved' : 'development' }))
        for (let k = 1; k <= 9; k++)
          out.push(n(`job-${++job}`, approach, { status: k % 3 ? 'open' : 'done', iteration: 'Sprint 1', description: 'Details.' }))
      }
    }
  }
  for (let t = 1; t <= tasks; t++) out.push(n(`task-${t}`, null, { kind: 'do-it' }))
  return out
}

describe('renderTokenOutline', () => {
  it('shows every node on one line with its status, iteration and claim, and descriptions when they fit', () => {
    const out = renderTokenOutline({ nodes: plan, budget: 1000, count, claimOf: (id) => (id === 'job-2' ? 'claude@laptop' : undefined) })
    const text = [
      '- [goal-1] Label goal-1 · focus — Why it matters.',
      '  - [need-1] Label need-1',
      '    - [approach-1] Label approach-1 · development · car',
      '      - [job-1] Label job-1 · done · Sprint 1',
      '      - [job-2] Label job-2 · open · Sprint 1 · claimed by claude@laptop — Send it on Monday.',
      '    - [approach-2] Label approach-2 · resolved',
      '      - [job-3] Label job-3 · done · Sprint 1',
      '- [task-1] Label task-1 · open · Later · do-it · urgent',
    ].join('\n')
    expect(out).toEqual({ text, tokens: count(text), nodeCount: 8, shown: 8 })
  })

  it('folds done and deeper parts first when the tree does not fit, and counts what it folded', () => {
    const out = renderTokenOutline({ nodes: plan, budget: 92, count })
    const text = [
      '- [goal-1] Label goal-1 · focus',
      '  - [need-1] Label need-1',
      '    - [approach-1] Label approach-1 · development · car',
      '      - … 2 more jobs (1 done)',
      '    - … 1 more approach (1 done), 1 job (1 done)',
      '- [task-1] Label task-1 · open · Later · do-it · urgent',
    ].join('\n')
    expect(out).toEqual({ text, tokens: count(text), nodeCount: 8, shown: 4 })
    expect(out.tokens).toBeLessThanOrEqual(92)
    // a little less: approach-1 does not fit, so its parent folds both approaches; the goal's description fits in what is left
    const less = renderTokenOutline({ nodes: plan, budget: 70, count })
    const lessText = [
      '- [goal-1] Label goal-1 · focus — Why it matters.',
      '  - [need-1] Label need-1',
      '    - … 2 more approaches (1 done), 3 jobs (2 done)',
      '- [task-1] Label task-1 · open · Later · do-it · urgent',
    ].join('\n')
    expect(less).toEqual({ text: lessText, tokens: count(lessText), nodeCount: 8, shown: 3 })
  })

  it('counts tokens exactly and stays within every budget, whatever the labels hold', () => {
    const odd = bigPlan(2, 30).map((node, i) =>
      i % 7
        ? i % 11
          ? node
          : { ...node, data: { ...node.data, label: ' \n ', description: '\n\n' } }
        : { ...node, data: { ...node.data, label: `<|endoftext|> ${'é😀'.repeat(i % 5)}\n  ) / ${i}!` } },
    )
    for (const budget of [200, 333, 1000, 4000, 9999, 50_000]) {
      const out = renderTokenOutline({ nodes: odd, budget, count })
      expect([out.tokens === count(out.text), out.tokens <= budget, out.text.split('\n').every((l) => /^( {2})*- /.test(l))]).toEqual([
        true,
        true,
        true,
      ])
    }
    expect(renderTokenOutline({ nodes: odd, budget: 50_000, count }).shown).toBe(odd.length)
  })

  it('counts exactly on random trees with random text (any Unicode, whitespace, punctuation)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom(' ', '\n', ')\n', '  x  ', '…', '123'),
    )
    const tree = fc.array(fc.record({ parent: fc.nat(), label: text, description: text, done: fc.boolean() }), {
      minLength: 1,
      maxLength: 60,
    })
    fc.assert(
      fc.property(tree, fc.integer({ min: 200, max: 1500 }), (rows, budget) => {
        const nodes: Node[] = []
        for (const [i, r] of rows.entries()) {
          // goal > need > approach > job by depth; parents are earlier rows
          const parent = i ? nodes[r.parent % i]! : null
          const type = (['goal', 'need', 'approach', 'job'] as const)[
            Math.min(parent ? 1 + ['goal', 'need', 'approach', 'job'].indexOf(parent.type) : 0, 3)
          ]!
          const id = `${type}-${i + 1}`
          nodes.push({
            id,
            type,
            parentId: type === 'goal' ? null : parent!.type === 'job' ? parent!.parentId : parent!.id,
            data: { label: r.label, description: r.description, ...(r.done ? { status: 'done' } : {}) },
          })
        }
        const out = renderTokenOutline({ nodes, budget, count, claimOf: (id) => (id.endsWith('3') ? rows[0]!.label : undefined) })
        return out.tokens === count(out.text) && out.tokens <= budget
      }),
      { numRuns: 150 },
    )
  })
})

describe('GET /api/v1/outline', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startApp()
  })
  afterAll(() => app.close())

  it('outlines the whole project, or the subtree of nodeId, with tokens and elided', async () => {
    const projectId = await planProject(app, { tasks: ['Call vendor'] })
    const whole = await app.call('GET', `/api/v1/outline?projectId=${projectId}`)
    const text = [
      '- [goal-1] Teams adopt the product',
      '  - [need-1] Managers cannot see progress',
      '    - [approach-1] Weekly summary e-mail',
      '      - [job-1] A manager receives the summary on Monday · open · Later',
      '      - [job-2] The summary lists every finished job · open · Later',
      '    - [approach-2] Live dashboard',
      '- [task-1] Call vendor · open · Later',
    ].join('\n')
    expect(whole.status).toBe(200)
    expect(whole.body).toEqual({ outline: text, tokens: count(text), elided: 0, _meta: { budget: 4000, nodeCount: 7, shown: 7 } })
    // the documented 200 schema (OpenAPI) holds the answer
    expect(Value.Check(OutlineResponse, whole.body)).toBe(true)

    const sub = await app.call('GET', `/api/v1/outline?projectId=${projectId}&nodeId=approach-1&budget=200`)
    const subText = [
      '- [approach-1] Weekly summary e-mail',
      '  - [job-1] A manager receives the summary on Monday · open · Later',
      '  - [job-2] The summary lists every finished job · open · Later',
    ].join('\n')
    expect(sub.body).toEqual({ outline: subText, tokens: count(subText), elided: 0, _meta: { budget: 200, nodeCount: 3, shown: 3 } })
  })

  it('refuses a bad budget with 400, an unknown node with 404 and another’s project with 403, as GET /tree does', async () => {
    const projectId = await planProject(app)
    const guide = { guide: 'http://arbor.test/api/v1/guide' }
    for (const budget of ['199', '50001', '1.5', 'abc', '', '4e3']) {
      const res = await app.call('GET', `/api/v1/outline?projectId=${projectId}&budget=${budget}`)
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { success: false, errors: ['budget must be an integer from 200 to 50000 (o200k_base tokens)'], _meta: guide },
      })
    }
    const unknown = await app.call('GET', `/api/v1/outline?projectId=${projectId}&nodeId=job-99`)
    const tree = await app.call('GET', `/api/v1/tree?projectId=${projectId}&nodeId=job-99&direction=down`)
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 404, body: tree.body })
    expect(unknown.body.error).toBe('Node job-99 not found')
    const other = await app.user()
    for (const query of [`projectId=${projectId}`, '']) {
      const denied = await app.call('GET', `/api/v1/outline?${query}`, { key: other.key })
      const treeDenied = await app.call('GET', `/api/v1/tree?${query}&format=outline`, { key: other.key })
      expect({ status: denied.status, body: denied.body }).toEqual({ status: treeDenied.status, body: treeDenied.body })
      expect(denied.status).toBe(query ? 403 : 400)
    }
  })

  it('outlines a 1,000-node project within budget 4,000, rendering in well under 100 ms', async () => {
    const projectId = await app.project()
    const nodes = bigPlan(4, 60).slice(0, 1000)
    const adds = nodes.map((node) => ({
      action: 'add',
      node: { id: `draft-${node.id}`, type: node.type, ...(node.parentId ? { parentId: `draft-${node.parentId}` } : {}), data: node.data },
    }))
    const sprint = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'addIteration', projectId, iteration: { name: 'Sprint 1' } },
    })
    expect(sprint.status).toBe(200)
    const made = await app.call('POST', '/api/v1/mutate', { body: { action: 'batch', projectId, mutations: adds } })
    expect({ status: made.status, errors: made.body.errors }).toEqual({ status: 200, errors: undefined })
    const times: number[] = []
    let body: any
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now()
      const res = await app.call('GET', `/api/v1/outline?projectId=${projectId}`)
      times.push(performance.now() - t0)
      body = res.body
    }
    expect([body.tokens <= 4000, body.tokens > 3800, body.tokens === count(body.outline)]).toEqual([true, true, true])
    expect(body.elided).toBe(1000 - body._meta.shown)
    expect(body.outline).toContain('more jobs')
    // the rendering itself (the request adds the read of the 1,000 rows that GET /nodes makes too): CPU
    // time, since eight test runs share this machine's two cores and wall time measures the queue
    const rows = (await app.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes as Node[]
    const cpu: number[] = []
    for (let i = 0; i < 7; i++) {
      const c0 = process.cpuUsage()
      const out = renderTokenOutline({ nodes: rows, budget: 4000, count })
      const used = process.cpuUsage(c0)
      cpu.push((used.user + used.system) / 1000)
      expect(out.text).toBe(body.outline)
    }
    const median = (xs: number[]) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
    console.log(
      `outline of 1,000 nodes at budget 4,000: rendering ${median(cpu).toFixed(1)} ms CPU (median of 7); GET /outline ${median(times.slice(1)).toFixed(0)} ms wall (first, loading the tokenizer: ${times[0]!.toFixed(0)} ms)`,
    )
    expect(median(cpu)).toBeLessThan(100)
  }, 60_000)
})
