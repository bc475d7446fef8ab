import { afterAll, describe, expect, it } from 'bun:test'
import { MEMO_INBOX_THRESHOLD } from '../src/nodes/service'
import { startApp } from './helpers'

// api.md POST /mutate: add and update, their rules 1-5, the Node tables, and _meta after a write
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown, headers?: Record<string, string>) => app.call('POST', '/api/v1/mutate', { body, headers })
const add = (projectId: string, node: unknown) => mutate({ action: 'add', projectId, node })
const update = (projectId: string, nodeId: string, data?: unknown, parentId?: unknown) =>
  mutate({ action: 'update', projectId, nodeId, data, parentId })
const rejected = (errors: string[], meta: Record<string, unknown> = {}) => ({ success: false, errors, _meta: { ...meta, guide: GUIDE } })
const focus = (projectId: string, nodeId: string) => ({ nodeId, viewCommand: { projectId, command: { type: 'selectNode', nodeId } } })
const nodes = async (p: string) => (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes

/** A project with goal-1 > need-1 > approach-1 > job-1, a second goal and need, and iteration S1. */
async function seeded() {
  const p = await app.project()
  const ok = async (node: unknown) => {
    const res = await add(p, node)
    if (res.status !== 200) throw new Error(JSON.stringify(res.body))
    return res.body.node
  }
  await ok({ type: 'goal', data: { label: 'Grow revenue' } })
  await ok({ type: 'need', parentId: 'goal-1', data: { label: 'Teams want shared plans' } })
  await ok({ type: 'approach', parentId: 'need-1', data: { label: 'Shared workspaces' } })
  await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
  await ok({ type: 'job', parentId: 'approach-1', data: { label: 'Two people edit one plan', iteration: 'S1' } })
  await ok({ type: 'goal', data: { label: 'Retain users' } })
  await ok({ type: 'need', parentId: 'goal-2', data: { label: 'Users forget to come back' } })
  return p
}

const ALL = ['goal', 'need', 'approach', 'job', 'task'] as const
// api.md, Fields of `data`: where each field is valid, and a valid value for it
const FIELD_TABLE: Record<string, { on: readonly string[]; sample: unknown }> = {
  label: { on: ALL, sample: 'x' },
  description: { on: ALL, sample: 'summary' },
  notes: { on: ['approach', 'job'], sample: 'context' },
  iteration: { on: ['job', 'task'], sample: 'Later' },
  status: { on: ['job', 'task'], sample: 'done' },
  maturity: { on: ['job'], sample: 'mvp' },
  measure: { on: ['approach'], sample: 'weekly active teams' },
  kano: { on: ['approach'], sample: 'delighter' },
  size: { on: ['approach'], sample: 'car' },
  approachStatus: { on: ['approach'], sample: 'validation' },
  goalStatus: { on: ['goal'], sample: 'focus' },
  blockedBy: { on: ['approach'], sample: [] },
  serves: { on: ['approach'], sample: [] },
  externalRefs: { on: ALL, sample: [] },
  demand: { on: ['need'], sample: [] },
  kind: { on: ['task'], sample: 'memo' },
  urgent: { on: ['task'], sample: true },
  completedAt: { on: ['job', 'task'], sample: '2025-01-01T00:00:00.000Z' },
}
const an = (t: string) => (/^[aeiou]/.test(t) ? 'an ' : 'a ') + t

describe('add: parent rules (api.md Node, parent table)', () => {
  it('adds every type under the parent type the table requires, with generated <type>-<number> ids', async () => {
    const p = await app.project()
    const g = await add(p, { type: 'goal', data: { label: 'G' } })
    expect(g.status).toBe(200)
    expect(g.body).toEqual({
      success: true,
      node: { id: 'goal-1', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'G' } },
      _meta: { focus: focus(p, 'goal-1') },
    })
    expect((await add(p, { type: 'need', parentId: 'goal-1', data: { label: 'N' } })).body.node).toEqual({
      id: 'need-1',
      rev: expect.any(String),
      type: 'need',
      parentId: 'goal-1',
      data: { label: 'N' },
    })
    expect((await add(p, { type: 'approach', parentId: 'need-1', data: { label: 'A' } })).body.node).toEqual({
      id: 'approach-1',
      rev: expect.any(String),
      type: 'approach',
      parentId: 'need-1',
      data: { label: 'A' },
    })
    expect((await add(p, { type: 'job', parentId: 'approach-1', data: { label: 'J' } })).body.node).toEqual({
      id: 'job-1',
      rev: expect.any(String),
      type: 'job',
      parentId: 'approach-1',
      data: { label: 'J', iteration: 'Later' },
    })
    expect((await add(p, { type: 'task', parentId: null, data: { label: 'T' } })).body.node).toEqual({
      id: 'task-1',
      rev: expect.any(String),
      type: 'task',
      parentId: null,
      data: { label: 'T', iteration: 'Later' },
    })
    expect((await add(p, { type: 'goal', data: { label: 'G2' } })).body.node.id).toBe('goal-2')
  })

  it('refuses a parent on a goal or a task', async () => {
    const p = await seeded()
    for (const type of ['goal', 'task'])
      expect((await add(p, { type, parentId: 'goal-1', data: { label: 'x' } })).body).toEqual(
        rejected([`${type === 'goal' ? 'A goal' : 'A task'} has no parent; send parentId: null or leave it out`]),
      )
  })

  it('requires a parent of the right type for need, approach and job', async () => {
    const p = await seeded()
    const cases = [
      ['need', 'goal', 'approach-1'],
      ['approach', 'need', 'goal-1'],
      ['job', 'approach', 'need-1'],
    ] as const
    for (const [type, parentType, wrong] of cases) {
      const missing = await add(p, { type, data: { label: 'x' } })
      expect(missing.status).toBe(400)
      expect(missing.body).toEqual(
        rejected([`parentId is required: ${an(type)} sits under ${an(parentType)}`], {
          _tip: `Send node:{type:"${type}", parentId:"<${parentType} id>", data:{label}}`,
        }),
      )
      const wrongType = await add(p, { type, parentId: wrong, data: { label: 'x' } })
      expect(wrongType.body).toEqual(
        rejected([
          `${an(type)[0]!.toUpperCase() + an(type).slice(1)}'s parent must be ${an(parentType)}; ${wrong} is ${an(wrong.split('-')[0]!)}`,
        ]),
      )
      expect((await add(p, { type, parentId: `${parentType}-99`, data: { label: 'x' } })).body).toEqual(
        rejected([`Parent node ${parentType}-99 not found`]),
      )
    }
  })

  it('rejects an unknown type, a missing data object and a client-supplied id outside a batch', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'epic', data: { label: 'x' } })).body).toEqual(
      rejected(['node.type must be one of: goal, need, approach, job, task']),
    )
    expect((await add(p, { type: 'goal' })).body).toEqual(rejected(['node.data is required: an object with at least a label']))
    expect((await add(p, { id: 'draft-1', type: 'goal', data: { label: 'x' } })).body).toEqual(
      rejected(['node.id cannot be supplied: ids are generated (draft- ids are allowed inside a batch only)']),
    )
  })
})

describe('add: rule 1, label', () => {
  it('requires a non-empty string label on every type', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'goal', data: {} })).body).toEqual(rejected(['label is required: a non-empty string']))
    expect((await add(p, { type: 'goal', data: { label: '   ' } })).body).toEqual(rejected(['label is required: a non-empty string']))
    expect((await add(p, { type: 'task', data: { label: 42 } })).body).toEqual(rejected(['label must be a string']))
    expect((await add(p, { type: 'goal', data: { label: '  Trimmed  ' } })).body.node.data).toEqual({ label: 'Trimmed' })
  })
})

describe('add and update: rule 3, fields must match the node type', () => {
  it('rejects every field of the table on every type where it is not valid, naming where it is', async () => {
    const p = await seeded()
    const parents: Record<string, string | undefined> = { need: 'goal-1', approach: 'need-1', job: 'approach-1' }
    for (const [field, { on, sample }] of Object.entries(FIELD_TABLE))
      for (const type of ALL.filter((t) => !on.includes(t))) {
        const res = await add(p, { type, parentId: parents[type], data: { label: 'x', [field]: sample } })
        expect({ field, type, status: res.status, body: res.body }).toEqual({
          field,
          type,
          status: 400,
          body: rejected([`${field} is not valid on ${an(type)}; it is valid on: ${on.join(', ')}`]),
        })
      }
  })

  it('rejects a field on the wrong type in an update too', async () => {
    const p = await seeded()
    expect((await update(p, 'goal-1', { notes: 'n' })).body).toEqual(
      rejected(['notes is not valid on a goal; it is valid on: approach, job']),
    )
    expect((await update(p, 'job-1', { kano: 'delighter' })).body).toEqual(
      rejected(['kano is not valid on a job; it is valid on: approach']),
    )
  })

  it('rejects a field that is in no table, listing the fields of the type', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'goal', data: { label: 'x', priority: 1 } })).body).toEqual(
      rejected(['Unknown field priority; fields of a goal: label, description, goalStatus, externalRefs']),
    )
  })

  it('stores every field valid on each type as sent', async () => {
    const p = await seeded()
    const ref = [{ system: 'jira', key: 'ARB-1', url: 'https://jira.example.com/ARB-1' }]
    const goal = { label: 'G', description: 'd', goalStatus: 'later', externalRefs: ref }
    const need = {
      label: 'N',
      description: 'd',
      demand: [{ who: 'Acme', at: '2025-03-01', revenue: 1200, size: 'enterprise', source: 'call', ask: 'SSO' }],
    }
    const approach = {
      label: 'A',
      description: 'd',
      notes: 'n',
      measure: 'm',
      kano: 'performance',
      size: 'antonov',
      approachStatus: 'retired',
      blockedBy: ['approach-1'],
      serves: ['need-2'],
    }
    const job = { label: 'J', description: 'd', notes: 'n', iteration: 'S1', maturity: 'releasable' }
    const task = { label: 'T', description: 'd', iteration: 'S1' }
    expect((await add(p, { type: 'goal', data: goal })).body.node.data).toEqual(goal)
    expect((await add(p, { type: 'need', parentId: 'goal-1', data: need })).body.node.data).toEqual(need)
    expect((await add(p, { type: 'approach', parentId: 'need-1', data: approach })).body.node.data).toEqual(approach)
    expect((await add(p, { type: 'job', parentId: 'approach-1', data: job })).body.node.data).toEqual(job)
    expect((await add(p, { type: 'task', data: task })).body.node.data).toEqual(task)
  })

  it('checks the type of plain string fields', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'goal', data: { label: 'x', description: 5 } })).body).toEqual(rejected(['description must be a string']))
  })
})

describe('add and update: rule 4, enumerated values', () => {
  const enums: [string, string, Record<string, unknown>, string][] = [
    ['kano', 'approach', { parentId: 'need-1' }, 'must-have, incremental, performance, delighter'],
    ['size', 'approach', { parentId: 'need-1' }, 'skateboard, vespa, car, truck, antonov'],
    ['approachStatus', 'approach', { parentId: 'need-1' }, 'development, validation, resolved, retired'],
    ['goalStatus', 'goal', {}, 'focus, later, done'],
    ['maturity', 'job', { parentId: 'approach-1' }, 'mvp, releasable'],
    ['status', 'job', { parentId: 'approach-1' }, 'done, open, delivered'],
    ['status', 'task', {}, 'done, open, delivered'],
  ]
  for (const [field, type, extra, allowed] of enums)
    it(`rejects ${an(field)} outside its values with '${field} must be one of: ${allowed}'`, async () => {
      const p = await seeded()
      const res = await add(p, { type, ...extra, data: { label: 'x', [field]: 'bogus' } })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(rejected([`${field} must be one of: ${allowed}`]))
    })

  it("rejects a kind outside 'memo, do-it' in an update", async () => {
    const p = await seeded()
    const { id } = (await add(p, { type: 'task', data: { label: 'x' } })).body.node
    expect((await update(p, id, { kind: 'someday' })).body).toEqual(rejected(['kind must be one of: memo, do-it']))
  })

  it('accepts performance as kano and stores it as sent', async () => {
    const p = await seeded()
    expect((await update(p, 'approach-1', { kano: 'performance' })).body.node.data.kano).toBe('performance')
  })
})

describe('add and update: rule 5, limits with the expected shape in _meta._tip', () => {
  const REFS_TIP = 'externalRefs is an array of at most 50 {system, key, url} objects; url starts with https://; no system+key pair twice'
  const DEMAND_TIP =
    'demand is an array of at most 25 {who, at, revenue?, size?, source?, ask?}; who a non-empty string, at a YYYY-MM-DD date, revenue a number >= 0'
  const SERVES_TIP = 'serves is an array of at most 5 distinct ids of existing needs, never the bet’s own parent'
  const ref = (i: number) => ({ system: 'gh', key: `#${i}`, url: `https://github.com/o/r/issues/${i}` })

  it('accepts 50 externalRefs and rejects 51', async () => {
    const p = await seeded()
    const fifty = Array.from({ length: 50 }, (_, i) => ref(i))
    expect((await update(p, 'goal-1', { externalRefs: fifty })).body.node.data.externalRefs).toEqual(fifty)
    expect((await update(p, 'goal-1', { externalRefs: [...fifty, ref(50)] })).body).toEqual(
      rejected(['externalRefs has 51 entries; at most 50 are allowed'], { _tip: REFS_TIP }),
    )
  })

  it('rejects externalRefs entries that break the shape', async () => {
    const p = await seeded()
    const cases: [unknown, string][] = [
      ['x', 'externalRefs must be an array'],
      [[{ system: 'gh', key: '1', url: 'http://github.com/1' }], 'externalRefs[0].url must be an https:// URL'],
      [[{ system: 'gh', key: '1' }], 'externalRefs[0].url is required: a non-empty string'],
      [
        [{ system: 'gh', key: '1', url: 'https://a.example', title: 't' }],
        'externalRefs[0] has unknown fields: title; only system, key and url are allowed',
      ],
      [[ref(1), { ...ref(1), url: 'https://other.example' }], 'externalRefs[1] repeats system gh with key #1'],
    ]
    for (const [externalRefs, message] of cases)
      expect((await add(p, { type: 'task', data: { label: 'x', externalRefs } })).body).toEqual(rejected([message], { _tip: REFS_TIP }))
  })

  it('accepts 25 demand entries on a need and rejects 26', async () => {
    const p = await seeded()
    const d = (i: number) => ({ who: `Customer ${i}`, at: '2025-02-28' })
    const ok = Array.from({ length: 25 }, (_, i) => d(i))
    expect((await update(p, 'need-1', { demand: ok })).body.node.data.demand).toEqual(ok)
    expect((await update(p, 'need-1', { demand: [...ok, d(25)] })).body).toEqual(
      rejected(['demand has 26 entries; at most 25 are allowed'], { _tip: DEMAND_TIP }),
    )
  })

  it('checks each demand entry: who, a real YYYY-MM-DD at, revenue >= 0, nothing else', async () => {
    const p = await seeded()
    const cases: [unknown, string][] = [
      [{ at: '2025-01-01' }, 'demand[0].who is required: a non-empty string'],
      [{ who: 'A', at: '2025-02-30' }, 'demand[0].at is required: a YYYY-MM-DD date'],
      [{ who: 'A', at: '01/02/2025' }, 'demand[0].at is required: a YYYY-MM-DD date'],
      [{ who: 'A', at: '2025-01-01', revenue: -1 }, 'demand[0].revenue must be a number >= 0'],
      [{ who: 'A', at: '2025-01-01', revenue: '100' }, 'demand[0].revenue must be a number >= 0'],
      [{ who: 'A', at: '2025-01-01', ask: 3 }, 'demand[0].ask must be a string'],
      [{ who: 'A', at: '2025-01-01', email: 'a@b' }, 'demand[0] has unknown fields: email'],
    ]
    for (const [entry, message] of cases)
      expect((await update(p, 'need-1', { demand: [entry] })).body).toEqual(rejected([message], { _tip: DEMAND_TIP }))
  })

  it('accepts 5 served needs and rejects 6, repeats, non-needs, unknown ids and the own parent', async () => {
    const p = await seeded()
    for (let i = 0; i < 4; i++) await add(p, { type: 'need', parentId: 'goal-2', data: { label: `N${i}` } })
    const five = ['need-2', 'need-3', 'need-4', 'need-5', 'need-6']
    expect((await update(p, 'approach-1', { serves: five })).body.node.data.serves).toEqual(five)
    await add(p, { type: 'need', parentId: 'goal-2', data: { label: 'N6' } })
    const cases: [unknown, string][] = [
      [[...five, 'need-7'], 'serves has 6 ids; at most 5 are allowed'],
      [['need-2', 'need-2'], 'serves must not repeat an id'],
      [['need-99'], 'serves names need-99, which is not an existing need'],
      [['goal-1'], 'serves must name needs; goal-1 is a goal'],
      [['need-1'], "serves must not name the bet's own parent need-1"],
      [[3], 'serves must be an array of node ids'],
    ]
    for (const [serves, message] of cases)
      expect((await update(p, 'approach-1', { serves })).body).toEqual(rejected([message], { _tip: SERVES_TIP }))
  })
})

describe('blockedBy', () => {
  const TIP =
    'blockedBy is an array of at most 50 distinct ids of existing approaches, never the approach itself, and no approach may end up blocking itself through others'
  it('holds ids of existing approaches, never the approach itself', async () => {
    const p = await seeded()
    const b = (await add(p, { type: 'approach', parentId: 'need-2', data: { label: 'B', blockedBy: ['approach-1'] } })).body.node
    expect(b.data.blockedBy).toEqual(['approach-1'])
    expect((await update(p, b.id, { blockedBy: [b.id] })).body).toEqual(
      rejected(['blockedBy must not name the approach itself'], { _tip: TIP }),
    )
    expect((await update(p, b.id, { blockedBy: ['job-1'] })).body).toEqual(
      rejected(['blockedBy must name approaches; job-1 is a job'], { _tip: TIP }),
    )
    expect((await update(p, b.id, { blockedBy: ['approach-9'] })).body).toEqual(
      rejected(['blockedBy names approach-9, which is not an existing approach'], { _tip: TIP }),
    )
  })
})

describe('add: iterations of jobs and tasks', () => {
  it('lands a job or task without iteration in Later and says so in _meta._tip', async () => {
    const p = await seeded()
    const res = await add(p, { type: 'task', data: { label: 'Call Acme back' } })
    expect(res.body).toEqual({
      success: true,
      node: { id: 'task-1', rev: expect.any(String), type: 'task', parentId: null, data: { label: 'Call Acme back', iteration: 'Later' } },
      _meta: { _tip: 'task-1 has no iteration, so it landed in Later.', focus: focus(p, 'task-1') },
    })
    const job = await add(p, { type: 'job', parentId: 'approach-1', data: { label: 'J' } })
    expect(job.body._meta._tip).toBe('job-2 has no iteration, so it landed in Later.')
  })

  it('adds no tip when the iteration is given', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'task', data: { label: 'x', iteration: 'S1' } })).body._meta).toEqual({ focus: focus(p, 'task-1') })
  })

  it('rejects an iteration that does not exist, listing those that do', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'task', data: { label: 'x', iteration: 'S9' } })).body).toEqual(
      rejected(['Iteration S9 not found; iterations: Later, S1']),
    )
  })
})

describe('task kind and urgent', () => {
  it('refuses kind on creation with a tip to classify', async () => {
    const p = await seeded()
    expect((await add(p, { type: 'task', data: { label: 'x', kind: 'memo' } })).body).toEqual(
      rejected(['kind is not supplied on creation; it is assigned by classification'], {
        _tip: 'Add the task without kind; it is classified within seconds, or call {action:"classify", projectId, nodeId} at once.',
      }),
    )
  })

  it('accepts urgent only on a do-it task, stored or sent in the same update, as a boolean', async () => {
    const p = await seeded()
    const { id } = (await add(p, { type: 'task', data: { label: 'x' } })).body.node
    const msg = 'urgent is only valid on a do-it task (kind: do-it, stored or sent in the same call)'
    expect((await add(p, { type: 'task', data: { label: 'y', urgent: true } })).body).toEqual(rejected([msg]))
    expect((await update(p, id, { urgent: true })).body).toEqual(rejected([msg]))
    expect((await update(p, id, { kind: 'do-it', urgent: 'yes' })).body).toEqual(rejected(['urgent must be true or false']))
    expect((await update(p, id, { kind: 'do-it', urgent: true })).body.node.data).toEqual({
      label: 'x',
      iteration: 'Later',
      kind: 'do-it',
      urgent: true,
    })
    expect((await update(p, id, { urgent: false })).body.node.data.urgent).toBe(false)
    expect((await update(p, id, { kind: 'memo', urgent: true })).body).toEqual(rejected([msg]))
    // a memo never keeps an urgent flag
    expect((await update(p, id, { kind: 'memo' })).body.node.data).toEqual({ label: 'x', iteration: 'Later', kind: 'memo' })
  })
})

describe('update: PATCH semantics', () => {
  it('changes only the sent fields, and null removes a field', async () => {
    const p = await seeded()
    await update(p, 'approach-1', { description: 'd', measure: 'm', kano: 'must-have' })
    const res = await update(p, 'approach-1', { measure: 'new', description: null })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      node: {
        id: 'approach-1',
        rev: expect.any(String),
        type: 'approach',
        parentId: 'need-1',
        data: { label: 'Shared workspaces', measure: 'new', kano: 'must-have' },
      },
      _meta: { focus: focus(p, 'approach-1') },
    })
  })

  it('never removes the label', async () => {
    const p = await seeded()
    expect((await update(p, 'goal-1', { label: null })).body).toEqual(rejected(['label is required: a non-empty string']))
    expect((await update(p, 'goal-1', { label: '' })).body).toEqual(rejected(['label is required: a non-empty string']))
  })

  it('replaces arrays whole', async () => {
    const p = await seeded()
    const a = { system: 'gh', key: '1', url: 'https://github.com/o/r/issues/1' }
    const b = { system: 'gh', key: '2', url: 'https://github.com/o/r/issues/2' }
    await update(p, 'approach-1', { externalRefs: [a, b], serves: ['need-2'] })
    const res = await update(p, 'approach-1', { externalRefs: [b], serves: [] })
    expect(res.body.node.data).toEqual({ label: 'Shared workspaces', externalRefs: [b], serves: [] })
  })

  it('requires data or parentId', async () => {
    const p = await seeded()
    expect((await mutate({ action: 'update', projectId: p, nodeId: 'goal-1' })).body).toEqual(
      rejected(['Send data (fields to change) and/or parentId']),
    )
    expect((await update(p, 'goal-1', ['label'])).body).toEqual(rejected(['data must be an object of the fields to change']))
  })

  it("answers 400 'Node with id <id> not found' for an unknown node", async () => {
    const p = await seeded()
    const res = await update(p, 'job-99', { label: 'x' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(rejected(['Node with id job-99 not found']))
    expect((await mutate({ action: 'update', projectId: p, data: { label: 'x' } })).body).toEqual(rejected(['nodeId is required']))
  })
})

describe('update: reparenting', () => {
  it('moves a node under a new parent of the right type', async () => {
    const p = await seeded()
    await add(p, { type: 'approach', parentId: 'need-2', data: { label: 'Other bet' } })
    const res = await update(p, 'job-1', undefined, 'approach-2')
    expect(res.body.node).toEqual({
      id: 'job-1',
      rev: expect.any(String),
      type: 'job',
      parentId: 'approach-2',
      data: { label: 'Two people edit one plan', iteration: 'S1' },
    })
    expect((await update(p, 'need-1', { label: 'Moved need' }, 'goal-2')).body.node).toEqual({
      id: 'need-1',
      rev: expect.any(String),
      type: 'need',
      parentId: 'goal-2',
      data: { label: 'Moved need' },
    })
  })

  it('refuses a parent of the wrong type, an unknown parent, or none where one is required', async () => {
    const p = await seeded()
    expect((await update(p, 'job-1', undefined, 'need-1')).body).toEqual(rejected(["A job's parent must be an approach; need-1 is a need"]))
    expect((await update(p, 'job-1', undefined, 'approach-9')).body).toEqual(rejected(['Parent node approach-9 not found']))
    expect((await update(p, 'approach-1', undefined, null)).body).toEqual(
      rejected(['parentId is required: an approach sits under a need'], {
        _tip: 'Send node:{type:"approach", parentId:"<need id>", data:{label}}',
      }),
    )
    expect((await update(p, 'goal-1', undefined, 'goal-2')).body).toEqual(
      rejected(['A goal has no parent; send parentId: null or leave it out']),
    )
    expect((await nodes(p)).find((n: any) => n.id === 'job-1').parentId).toBe('approach-1')
  })

  it('removes a need from serves when the bet moves under it', async () => {
    const p = await seeded()
    await add(p, { type: 'need', parentId: 'goal-2', data: { label: 'N3' } })
    await update(p, 'approach-1', { serves: ['need-2', 'need-3'] })
    const res = await update(p, 'approach-1', undefined, 'need-2')
    expect(res.body.node).toEqual({
      id: 'approach-1',
      rev: expect.any(String),
      type: 'approach',
      parentId: 'need-2',
      data: { label: 'Shared workspaces', serves: ['need-3'] },
    })
  })
})

describe('update: stored references', () => {
  it('does not re-check stored serves or blockedBy that name a node deleted since, unless they are sent', async () => {
    const p = await seeded()
    await add(p, { type: 'approach', parentId: 'need-2', data: { label: 'Blocker' } })
    await add(p, { type: 'need', parentId: 'goal-2', data: { label: 'N3' } })
    await update(p, 'approach-1', { serves: ['need-3'], blockedBy: ['approach-2'] })
    await mutate({ action: 'delete', projectId: p, nodeId: 'need-3' })
    await mutate({ action: 'delete', projectId: p, nodeId: 'approach-2' })
    const moved = await update(p, 'approach-1', { measure: 'm' }, 'need-2')
    expect(moved.status).toBe(200)
    expect(moved.body.node.data).toEqual({ label: 'Shared workspaces', serves: ['need-3'], blockedBy: ['approach-2'], measure: 'm' })
    expect((await update(p, 'approach-1', { serves: ['need-3'] })).body).toEqual(
      rejected(['serves names need-3, which is not an existing need'], {
        _tip: 'serves is an array of at most 5 distinct ids of existing needs, never the bet’s own parent',
      }),
    )
  })
})

describe('_meta after a write', () => {
  it('carries focus with a viewCommand that is a whole POST /view-command body', async () => {
    const p = await seeded()
    const res = await update(p, 'need-1', { description: 'd' })
    expect(res.body._meta.focus).toEqual({
      nodeId: 'need-1',
      viewCommand: { projectId: p, command: { type: 'selectNode', nodeId: 'need-1' } },
    })
  })

  it(`adds the inbox_overflow advisory once more than ${MEMO_INBOX_THRESHOLD} memos wait`, async () => {
    const p = await seeded()
    const n = MEMO_INBOX_THRESHOLD
    const mutations = [
      ...Array.from({ length: n }, (_, i) => ({ action: 'add', node: { id: `draft-${i}`, type: 'task', data: { label: `Note ${i}` } } })),
      ...Array.from({ length: n }, (_, i) => ({ action: 'update', nodeId: `draft-${i}`, data: { kind: 'memo' } })),
    ]
    expect((await mutate({ action: 'batch', projectId: p, mutations })).status).toBe(200)
    const atThreshold = await add(p, { type: 'task', data: { label: 'One more' } })
    expect(atThreshold.body._meta.advisory).toBeUndefined()
    await update(p, atThreshold.body.node.id, { kind: 'memo' })
    const over = await add(p, { type: 'task', data: { label: 'And another' } })
    expect(over.body._meta.advisory).toEqual({ type: 'inbox_overflow', memos: n + 1, threshold: n, suggestedFlow: 'task-curate' })
    // a done memo has left the inbox
    await update(p, 'task-1', { status: 'done' })
    expect((await add(p, { type: 'task', data: { label: 'x' } })).body._meta.advisory).toBeUndefined()
  })
})

describe('idempotency', () => {
  it('replays an add with the same key and body, and writes the node once', async () => {
    const p = await seeded()
    const body = { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Once' } } }
    const first = await mutate(body, { 'idempotency-key': 'add-once' })
    const again = await mutate(body, { 'idempotency-key': 'add-once' })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect((await nodes(p)).filter((n: any) => n.data.label === 'Once')).toHaveLength(1)
    const other = await mutate({ ...body, node: { type: 'goal', data: { label: 'Twice' } } }, { 'idempotency-key': 'add-once' })
    expect(other.status).toBe(409)
    expect(other.body).toEqual({ success: false, errors: ['Idempotency-Key already used with a different request body'] })
  })

  it('honours idempotencyKey as a body field like the header', async () => {
    const p = await seeded()
    const body = { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'Body key' } }, idempotencyKey: 'k-body' }
    const first = await mutate(body)
    const again = await mutate(body)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })
})

describe('access', () => {
  it('refuses a project the key cannot reach', async () => {
    const p = await seeded()
    const stranger = await app.user()
    const res = await app.call('POST', '/api/v1/mutate', {
      key: stranger.key,
      body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'x' } } },
    })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: {
        guide: GUIDE,
        _tip: `projectId "${p}" names no project this key can see (a typo, or a project it is not a member of); GET /api/v1/projects lists the ids this key can use.`,
      },
    })
  })
})

describe('the label as stored', () => {
  // the rules read the label as it is stored, without the spaces around it (src/nodes/rules.ts
  // `asStored`): an add, an update and a batch's entries store it so
  it('stores a label without the spaces around it', async () => {
    const p = await seeded()
    const added = await add(p, { type: 'goal', data: { label: '  Spaced goal \n' } })
    expect(added.body.node.data.label).toBe('Spaced goal')
    const updated = await update(p, added.body.node.id, { label: '\t Spaced again  ' })
    expect(updated.body.node.data.label).toBe('Spaced again')
    const batch = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { type: 'goal', id: 'draft-g', data: { label: ' Batch goal ' } } },
        { action: 'update', nodeId: 'goal-1', data: { label: ' Grow revenue, spaced ' } },
      ],
    })
    expect(batch.status).toBe(200)
    const byId = new Map<string, string>((await nodes(p)).map((n: { id: string; data: { label: string } }) => [n.id, n.data.label]))
    expect(byId.get('goal-1')).toBe('Grow revenue, spaced')
    expect([...byId.values()]).toContain('Batch goal')
    expect([...byId.values()].filter((l) => l !== l.trim())).toEqual([])
  })
})
