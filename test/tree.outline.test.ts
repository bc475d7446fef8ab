import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { Node } from '../src/nodes/model'
import { renderOutline } from '../src/tree/outline'
import { startApp, type TestApp } from './helpers'
import { planProject } from './workflow-fixtures'

const n = (id: string, parentId: string | null, data: Record<string, unknown> = {}): Node => ({
  id,
  type: id.split('-')[0] as Node['type'],
  parentId,
  data: { label: id.toUpperCase(), ...data },
})

const tree: Node[] = [
  n('goal-1', null, { goalStatus: 'focus' }),
  n('need-1', 'goal-1'),
  n('approach-1', 'need-1', { approachStatus: 'development', size: 'car' }),
  n('job-1', 'approach-1', { status: 'done', iteration: 'S1' }),
  n('job-2', 'approach-1', { iteration: 'Later', maturity: 'mvp' }),
  n('goal-2', null),
  n('need-2', 'goal-2'),
  n('task-1', null, { kind: 'memo', iteration: 'Later' }),
]

describe('renderOutline', () => {
  it('shows every node with its id, label and status fields, indented under its parent, tasks last', () => {
    expect(renderOutline(tree, 10_000, { title: 'Project p:' })).toEqual({
      text: [
        'Project p:',
        '- goal-1 "GOAL-1" [focus]',
        '  - need-1 "NEED-1"',
        '    - approach-1 "APPROACH-1" [development, car]',
        '      - job-1 "JOB-1" [done, iteration: S1]',
        '      - job-2 "JOB-2" [open, iteration: Later, mvp]',
        '- goal-2 "GOAL-2"',
        '  - need-2 "NEED-2"',
        'Tasks (standalone, outside the hierarchy):',
        '- task-1 "TASK-1" [open, iteration: Later, memo]',
      ].join('\n'),
      nodeCount: 8,
      shown: 8,
    })
  })

  it('keeps the upper levels within the budget and summarises each hidden subtree as counts under its shown ancestor', () => {
    const out = renderOutline(tree, 220, { title: 'Project p:' })
    expect(out.text.length).toBeLessThanOrEqual(220)
    expect(out).toEqual({
      text: [
        'Project p:',
        '- goal-1 "GOAL-1" [focus]',
        '  - need-1 "NEED-1"',
        '    - … not shown: 1 approach, 2 jobs (1 done)',
        '- goal-2 "GOAL-2"',
        '  - need-2 "NEED-2"',
        'Tasks (standalone, outside the hierarchy):',
        '- … not shown: 1 task',
      ].join('\n'),
      nodeCount: 8,
      shown: 4,
    })
  })

  it('stays within every budget from tiny to ample on a 2,000-node project', () => {
    const big: Node[] = [n('goal-1', null)]
    for (let i = 1; i <= 20; i++) {
      big.push(n(`need-${i}`, 'goal-1'))
      for (let j = 1; j <= 9; j++) {
        const a = `approach-${i * 10 + j}`
        big.push(n(a, `need-${i}`))
        for (let k = 1; k <= 10; k++) big.push(n(`job-${(i * 10 + j) * 10 + k}`, a, { status: k % 2 ? 'done' : undefined }))
      }
    }
    for (const budget of [200, 1000, 5000, 20_000, 200_000]) {
      const out = renderOutline(big, budget)
      expect(out.text.length).toBeLessThanOrEqual(budget)
      expect(out.nodeCount).toBe(big.length)
    }
    expect(renderOutline(big, 200_000).shown).toBe(big.length)
  })
})

describe('GET /tree?format=outline', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await startApp()
  })
  afterAll(() => app.close())

  it('renders the whole project without nodeId or direction, and reports what it summarised', async () => {
    // a fixed id: the title line counts against the budget
    const projectId = await planProject(app, { tasks: ['Call vendor'], id: 'outline-whole' })
    const res = await app.call('GET', `/api/v1/tree?projectId=${projectId}&format=outline&budget=230`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      outline: [
        `Project ${projectId}:`,
        '- goal-1 "Teams adopt the product"',
        '  - need-1 "Managers cannot see progress"',
        '    - … not shown: 2 approaches, 2 jobs',
        'Tasks (standalone, outside the hierarchy):',
        '- … not shown: 1 task',
      ].join('\n'),
      _meta: {
        format: 'outline',
        budget: 230,
        chars: res.body.outline.length,
        nodeCount: 7,
        shown: 2,
        _tip: '5 node(s) are summarised as counts; raise budget (at most 200000) or pass nodeId for a narrower outline.',
      },
    })
  })

  it('renders the path to nodeId and its subtree', async () => {
    const projectId = await planProject(app)
    const res = await app.call('GET', `/api/v1/tree?projectId=${projectId}&format=outline&nodeId=approach-1`)
    expect(res.status).toBe(200)
    expect(res.body.outline).toBe(
      [
        `Project ${projectId}, around approach-1:`,
        '- goal-1 "Teams adopt the product"',
        '  - need-1 "Managers cannot see progress"',
        '    - approach-1 "Weekly summary e-mail"',
        '      - job-1 "A manager receives the summary on Monday" [open, iteration: Later]',
        '      - job-2 "The summary lists every finished job" [open, iteration: Later]',
      ].join('\n'),
    )
  })

  it('refuses a bad format or budget with 400 and _meta.guide, and an unknown nodeId with 404; walks still need direction', async () => {
    const projectId = await planProject(app)
    const badFormat = await app.call('GET', `/api/v1/tree?projectId=${projectId}&format=xml`)
    expect(badFormat.status).toBe(400)
    expect(badFormat.body).toEqual({
      error: 'format must be outline (or left out for a walk with direction)',
      _meta: { guide: 'http://arbor.test/api/v1/guide' },
    })
    const badBudget = await app.call('GET', `/api/v1/tree?projectId=${projectId}&format=outline&budget=10`)
    expect(badBudget.status).toBe(400)
    expect(badBudget.body.errors).toEqual(['budget must be an integer from 200 to 200000 (characters)'])
    const unknown = await app.call('GET', `/api/v1/tree?projectId=${projectId}&format=outline&nodeId=job-99`)
    expect(unknown.status).toBe(404)
    const walk = await app.call('GET', `/api/v1/tree?projectId=${projectId}&nodeId=goal-1`)
    expect(walk.status).toBe(400)
    expect(walk.body.error).toBe('direction must be one of: up, down, lateral, context')
  })
})
