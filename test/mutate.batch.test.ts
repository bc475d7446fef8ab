import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// api.md POST /mutate batch (rules for batch 1-5, improved: one transaction) and
// self-hosting.md's reading of client-supplied ids inside a batch
const app = await startApp()
afterAll(() => app.close())

const GUIDE = 'http://arbor.test/api/v1/guide'
const mutate = (body: unknown, headers?: Record<string, string>) => app.call('POST', '/api/v1/mutate', { body, headers })
const batch = (projectId: string, mutations: unknown[], headers?: Record<string, string>) =>
  mutate({ action: 'batch', projectId, mutations }, headers)
const listNodes = async (p: string) => (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
const iterationNames = async (p: string) =>
  (await app.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations.map((i: any) => i.name)
const eventCount = async (p: string) =>
  (await app.db.query<{ n: number }>('select count(*)::int as n from events where project_id = $1', [p]))[0]!.n
const rejected = (errors: string[], meta: Record<string, unknown> = {}) => ({ success: false, errors, _meta: { ...meta, guide: GUIDE } })
const focus = (projectId: string, nodeId: string) => ({ nodeId, viewCommand: { projectId, command: { type: 'selectNode', nodeId } } })

async function seeded() {
  const p = await app.project()
  const res = await batch(p, [
    { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
    { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
    { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
    { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J' } } },
  ])
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  return p
}

describe('rule 1: every entry is validated; one invalid entry rejects the whole batch', () => {
  it("refuses an entry's data that repeats an id, with its entry's index, as the single action does", async () => {
    const p = await seeded()
    const before = await listNodes(p)
    const tip = 'serves is an array of at most 5 distinct ids of existing needs, never the bet’s own parent'
    const adds = await batch(p, [
      { action: 'add', node: { type: 'goal', data: { label: 'fine' } } },
      { action: 'add', node: { type: 'approach', parentId: 'need-1', data: { label: 'A2', serves: ['need-1', 'need-1'] } } },
    ])
    expect(adds.status).toBe(400)
    expect(adds.body).toEqual(rejected(['mutations[1]: serves must not repeat an id'], { _tip: tip }))
    const updates = await batch(p, [{ action: 'update', nodeId: 'approach-1', data: { blockedBy: ['approach-1', 'approach-1'] } }])
    expect(updates.status).toBe(400)
    expect(updates.body.errors).toEqual(['mutations[0]: blockedBy must not repeat an id'])
    expect(await listNodes(p)).toEqual(before)
  })

  it("answers 400 'mutations[<index>]: …' and writes nothing, not even ids or events", async () => {
    const p = await seeded()
    const before = { nodes: await listNodes(p), events: await eventCount(p) }
    const res = await batch(p, [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'add', node: { type: 'goal', data: { label: 'New goal' } } },
      { action: 'update', nodeId: 'goal-1', data: { label: 'Renamed' } },
      { action: 'delete', nodeId: 'job-1' },
      { action: 'add', node: { type: 'approach', parentId: 'need-1', data: { label: 'Bet', kano: 'wow' } } },
    ])
    expect(res.status).toBe(400)
    expect(res.body).toEqual(rejected(['mutations[4]: kano must be one of: must-have, incremental, performance, delighter']))
    expect(await listNodes(p)).toEqual(before.nodes)
    expect(await iterationNames(p)).toEqual(['Later'])
    expect(await eventCount(p)).toBe(before.events)
    // the ids the rejected batch would have used are still free
    expect((await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G2' } } })).body.node.id).toBe('goal-2')
  })

  it('names the entry for every kind of mistake', async () => {
    const p = await seeded()
    const cases: [unknown, string][] = [
      [{ action: 'move', nodeId: 'job-1' }, 'mutations[1]: action must be one of: add, update, delete, addIteration'],
      [{ action: 'update', nodeId: 'job-9', data: { label: 'x' } }, 'mutations[1]: Node with id job-9 not found'],
      [{ action: 'delete', nodeId: 'job-9' }, 'mutations[1]: Node with id job-9 not found'],
      [
        { action: 'add', node: { type: 'job', parentId: 'draft-zz', data: { label: 'x' } } },
        'mutations[1]: parentId draft-zz names no earlier draft of this batch',
      ],
      [{ action: 'addIteration', iteration: { name: 'Later' } }, 'mutations[1]: Iteration Later already exists in this project'],
      [
        { action: 'add', projectId: 'other-project', node: { type: 'goal', data: { label: 'x' } } },
        "mutations[1]: entries carry no projectId of their own (the batch's projectId applies)",
      ],
    ]
    for (const [entry, message] of cases) {
      const res = await batch(p, [{ action: 'add', node: { type: 'goal', data: { label: 'ok' } } }, entry])
      expect(res.body).toEqual(rejected([message]))
    }
    expect((await listNodes(p)).filter((n: any) => n.data.label === 'ok')).toEqual([])
  })

  it("takes an entry's projectId when it is the batch's, and refuses another in a proposal too", async () => {
    const p = await seeded()
    const own = await batch(p, [{ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'own' } } }])
    expect([own.status, own.body.results?.[0]?.action]).toEqual([200, 'add'])
    const entries = [
      { action: 'add', node: { type: 'goal', data: { label: 'x' } } },
      { action: 'delete', projectId: 7, nodeId: 'goal-1' },
    ]
    const wrongType = await batch(p, entries)
    expect(wrongType.body).toEqual(rejected(["mutations[1]: entries carry no projectId of their own (the batch's projectId applies)"]))
    const proposal = await mutate({
      action: 'propose',
      projectId: p,
      title: 'T',
      mutations: [{ action: 'add', projectId: 'elsewhere', node: { type: 'goal', data: { label: 'x' } } }],
    })
    expect([proposal.status, proposal.body.errors]).toEqual([
      400,
      ["mutations[0]: entries carry no projectId of their own (the batch's projectId applies)"],
    ])
  })

  it("reads an entry's own draft id as the id it is given, in its parent and its references", async () => {
    const p = await seeded()
    const blocked = await batch(p, [
      { action: 'add', node: { id: 'draft-self', type: 'approach', parentId: 'need-1', data: { label: 'x', blockedBy: ['draft-self'] } } },
    ])
    expect(blocked.body.errors).toEqual(['mutations[0]: blockedBy names approach-2, which is not an existing approach'])
    const under = await batch(p, [
      { action: 'add', node: { id: 'draft-self', type: 'need', parentId: 'draft-self', data: { label: 'x' } } },
    ])
    expect(under.body.errors).toEqual(['mutations[0]: Parent node need-2 not found'])
  })

  it('requires a non-empty mutations array of at most 1000 entries', async () => {
    const p = await seeded()
    expect((await batch(p, [])).body).toEqual(
      rejected(['mutations is required: a non-empty array of add, update, delete or addIteration entries']),
    )
    const tooMany = Array.from({ length: 1001 }, () => ({ action: 'add', node: { type: 'goal', data: { label: 'x' } } }))
    expect((await batch(p, tooMany)).body).toEqual(rejected(['mutations has 1001 entries; at most 1000 are allowed per batch']))
  })
})

describe('rules 2 and 3: addIteration first, draft ids remapped', () => {
  it('applies addIteration before nodes, so a job may name an iteration created later in the list', async () => {
    const p = await seeded()
    const res = await batch(p, [
      { action: 'add', node: { type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'S1' } } },
      { action: 'addIteration', iteration: { name: 'S1' } },
    ])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      results: [
        {
          action: 'add',
          nodeId: 'job-2',
          node: { id: 'job-2', rev: expect.any(String), type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'S1' } },
        },
        {
          action: 'addIteration',
          iteration: { name: 'S1', rev: expect.any(String), status: 'active', system: false, sortOrder: 1, gitTags: [], completedAt: null },
        },
      ],
      idMap: {},
      _meta: { _tip: 'Applied 2 mutation(s).', focus: focus(p, 'job-2') },
    })
  })

  it('remaps draft ids in parentId, serves, blockedBy and in later update and delete entries', async () => {
    const p = await seeded()
    const res = await batch(p, [
      { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'goal-1', data: { label: 'N2' } } },
      {
        action: 'add',
        node: {
          id: 'draft-b',
          type: 'approach',
          parentId: 'need-1',
          data: { label: 'B', serves: ['draft-n2'], blockedBy: ['approach-1'] },
        },
      },
      { action: 'add', node: { id: 'draft-c', type: 'approach', parentId: 'draft-n2', data: { label: 'C', blockedBy: ['draft-b'] } } },
      { action: 'add', node: { id: 'draft-t', type: 'task', data: { label: 'T' } } },
      { action: 'update', nodeId: 'draft-c', data: { measure: 'm' } },
      { action: 'delete', nodeId: 'draft-t' },
    ])
    expect(res.status).toBe(200)
    expect(res.body.idMap).toEqual({ 'draft-n2': 'need-2', 'draft-b': 'approach-2', 'draft-c': 'approach-3', 'draft-t': 'task-1' })
    expect(res.body.results.map((r: any) => [r.action, r.nodeId, r.draftId])).toEqual([
      ['add', 'need-2', 'draft-n2'],
      ['add', 'approach-2', 'draft-b'],
      ['add', 'approach-3', 'draft-c'],
      ['add', 'task-1', 'draft-t'],
      ['update', 'approach-3', undefined],
      ['delete', 'task-1', undefined],
    ])
    const nodes = await listNodes(p)
    expect(nodes.slice(4)).toEqual([
      { id: 'need-2', rev: expect.any(String), type: 'need', parentId: 'goal-1', data: { label: 'N2' } },
      {
        id: 'approach-2',
        rev: expect.any(String),
        type: 'approach',
        parentId: 'need-1',
        data: { label: 'B', serves: ['need-2'], blockedBy: ['approach-1'] },
      },
      {
        id: 'approach-3',
        rev: expect.any(String),
        type: 'approach',
        parentId: 'need-2',
        data: { label: 'C', blockedBy: ['approach-2'], measure: 'm' },
      },
    ])
  })

  it('refuses the same draft id twice', async () => {
    const p = await seeded()
    const res = await batch(p, [
      { action: 'add', node: { id: 'draft-x', type: 'goal', data: { label: 'a' } } },
      { action: 'add', node: { id: 'draft-x', type: 'goal', data: { label: 'b' } } },
    ])
    expect(res.body).toEqual(rejected(['mutations[1]: draft id draft-x is used twice in this batch']))
  })

  it('lands jobs and tasks without iteration in Later and says so', async () => {
    const p = await app.project()
    const res = await batch(p, [{ action: 'add', node: { type: 'task', data: { label: 'T' } } }])
    expect(res.body._meta._tip).toBe('Applied 1 mutation(s). task-1 has no iteration, so it landed in Later.')
  })
})

describe('rule 3: any other id is the real key', () => {
  it('keeps explicit <type>-<number> ids and moves the counter past them', async () => {
    const p = await app.project()
    const res = await batch(p, [
      { action: 'add', node: { id: 'goal-7', type: 'goal', data: { label: 'G7' } } },
      { action: 'add', node: { id: 'need-3', type: 'need', parentId: 'goal-7', data: { label: 'N3' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'goal-7', data: { label: 'drafted' } } },
    ])
    expect(res.status).toBe(200)
    expect(res.body.idMap).toEqual({ 'draft-n': 'need-4' })
    expect((await listNodes(p)).map((n: any) => n.id)).toEqual(['goal-7', 'need-3', 'need-4'])
    expect((await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'next' } } })).body.node.id).toBe('goal-8')
  })

  it('refuses an explicit id that exists, was used before, repeats, or names another type', async () => {
    const p = await seeded()
    await mutate({ action: 'delete', projectId: p, nodeId: 'job-1' })
    const cases: [unknown, string][] = [
      [{ id: 'goal-1', type: 'goal', data: { label: 'x' } }, 'mutations[0]: Node with id goal-1 already exists'],
      [
        { id: 'job-1', type: 'job', parentId: 'approach-1', data: { label: 'x' } },
        'mutations[0]: node.id job-1 was used before in this project and ids are never reused; give the node a draft- id instead',
      ],
      [{ id: 'need-3', type: 'goal', data: { label: 'x' } }, 'mutations[0]: node.id need-3 must be a draft- id or a goal-<number> id'],
      [{ id: 'goal-01', type: 'goal', data: { label: 'x' } }, 'mutations[0]: node.id goal-01 must be a draft- id or a goal-<number> id'],
    ]
    for (const [node, message] of cases) expect((await batch(p, [{ action: 'add', node }])).body).toEqual(rejected([message]))
    const twice = await batch(p, [
      { action: 'add', node: { id: 'goal-5', type: 'goal', data: { label: 'a' } } },
      { action: 'add', node: { id: 'goal-5', type: 'goal', data: { label: 'b' } } },
    ])
    expect(twice.body).toEqual(rejected(['mutations[1]: node.id goal-5 is used twice in this batch']))
  })
})

describe('rules 4 and 5, improved: one transaction', () => {
  it('applies adds, updates and deletes together', async () => {
    const p = await seeded()
    const res = await batch(p, [
      { action: 'update', nodeId: 'goal-1', data: { description: 'd' } },
      { action: 'delete', nodeId: 'job-1' },
      { action: 'add', node: { type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'Later' } } },
    ])
    expect(res.body.results).toEqual([
      {
        action: 'update',
        nodeId: 'goal-1',
        node: { id: 'goal-1', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'G', description: 'd' } },
      },
      { action: 'delete', nodeId: 'job-1', orphanedChildren: [], changelogId: expect.any(Number) },
      {
        action: 'add',
        nodeId: 'job-2',
        node: { id: 'job-2', rev: expect.any(String), type: 'job', parentId: 'approach-1', data: { label: 'J2', iteration: 'Later' } },
      },
    ])
    expect(res.body._meta.focus).toEqual(focus(p, 'goal-1'))
  })

  it('answers 500 with rolledBack and no partial when a write fails mid-apply, and nothing survives', async () => {
    // a real failure inside the database: a trigger that refuses one label
    await app.db.exec(`
      create or replace function arbor_test_explode() returns trigger language plpgsql as $$
      begin
        if new.data ->> 'label' = 'EXPLODE' then raise exception 'injected failure'; end if;
        return new;
      end $$;
      create trigger arbor_test_explode before insert or update on nodes for each row execute function arbor_test_explode();
    `)
    const p = await seeded()
    const before = { nodes: await listNodes(p), events: await eventCount(p) }
    const mutations = [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G2' } } },
      { action: 'update', nodeId: 'goal-1', data: { label: 'G renamed' } },
      { action: 'add', node: { type: 'need', parentId: 'draft-g', data: { label: 'N2' } } },
      { action: 'delete', nodeId: 'job-1' },
      { action: 'add', node: { type: 'task', data: { label: 'T', iteration: 'S1' } } },
      { action: 'update', nodeId: 'approach-1', data: { label: 'EXPLODE' } },
    ]
    const res = await batch(p, mutations, { 'idempotency-key': 'explode-1' })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({
      success: false,
      errors: ['mutations[6]: write failed (injected failure); the whole batch was rolled back and may be retried'],
      _meta: { _tip: 'Nothing of this batch was written. Retry it as it is, or reconcile from GET /nodes first.' },
      rolledBack: { nodes: 3, iterations: 1 },
    })
    expect(await listNodes(p)).toEqual(before.nodes)
    expect(await iterationNames(p)).toEqual(['Later'])
    expect(await eventCount(p)).toBe(before.events)
    expect((await app.call('GET', `/api/v1/changelog?projectId=${p}`)).body.changelog).toEqual([])

    // a failure in the final insert of the new nodes rolls back just the same
    const late = await batch(p, [
      { action: 'update', nodeId: 'goal-1', data: { label: 'G renamed' } },
      { action: 'add', node: { type: 'goal', data: { label: 'EXPLODE' } } },
    ])
    expect(late.status).toBe(500)
    expect(late.body.errors).toEqual(['write failed (injected failure); the whole batch was rolled back and may be retried'])
    expect(late.body.rolledBack).toEqual({ nodes: 1, iterations: 0 })
    expect('partial' in late.body).toBe(false)
    expect(await listNodes(p)).toEqual(before.nodes)

    // the same key may retry the whole batch once the cause is gone
    await app.db.exec('drop trigger arbor_test_explode on nodes')
    const retry = await batch(p, mutations.slice(0, 6), { 'idempotency-key': 'explode-1b' })
    expect(retry.status).toBe(200)
    expect(retry.body.idMap).toEqual({ 'draft-g': 'goal-2' })
  })

  it('a deadlock (or a serialization failure) inside an entry is not its 500: the transaction runs it again (PostgreSQL), then 503', async () => {
    // a trigger that fails one label as PostgreSQL fails a deadlock's victim, counting the attempts (a sequence is not rolled back)
    await app.db.exec(`
      create sequence arbor_test_attempts;
      create or replace function arbor_test_deadlock() returns trigger language plpgsql as $$
      begin
        if new.data ->> 'label' = 'DEADLOCK' then
          perform nextval('arbor_test_attempts');
          raise exception 'deadlock detected (injected)' using errcode = '40P01';
        end if;
        return new;
      end $$;
      create trigger arbor_test_deadlock before insert or update on nodes for each row execute function arbor_test_deadlock();
    `)
    try {
      const p = await seeded()
      const before = { nodes: await listNodes(p), events: await eventCount(p) }
      const res = await batch(p, [
        { action: 'update', nodeId: 'goal-1', data: { label: 'G renamed' } },
        { action: 'update', nodeId: 'approach-1', data: { label: 'DEADLOCK' } },
      ])
      expect({ status: res.status, error: res.body.error, retryAfter: res.headers.get('retry-after') }).toEqual({
        status: 503,
        error: 'unavailable',
        retryAfter: '1',
      })
      // PostgreSQL's transaction ran it four times (src/db/postgres.ts); PGlite, one transaction at a time, has no deadlocks and runs it once
      const [{ n }] = await app.db.query<{ n: number }>('select last_value::int as n from arbor_test_attempts')
      expect(n).toBe(app.db.kind === 'postgres' ? 4 : 1)
      expect(await listNodes(p)).toEqual(before.nodes)
      expect(await eventCount(p)).toBe(before.events)
    } finally {
      await app.db.exec('drop trigger arbor_test_deadlock on nodes; drop sequence arbor_test_attempts')
    }
  })

  it('runs concurrent batches and adds without deadlock or a shared id, whatever order their types come in', async () => {
    const p = await app.project()
    const goalThenTask = [
      { action: 'add', node: { type: 'goal', data: { label: 'g' } } },
      { action: 'add', node: { type: 'task', data: { label: 't' } } },
    ]
    const taskThenGoal = [...goalThenTask].reverse()
    const calls = [
      ...Array.from({ length: 30 }, (_, i) => batch(p, i % 2 ? goalThenTask : taskThenGoal)),
      ...Array.from({ length: 10 }, () => mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'single' } } })),
    ]
    const statuses = (await Promise.all(calls)).map((r) => r.status)
    expect(statuses).toEqual(calls.map(() => 200))
    const ids = (await listNodes(p)).map((n: any) => n.id)
    expect(ids).toHaveLength(70)
    expect(new Set(ids).size).toBe(70)
    expect(
      ids.filter((id: string) => id.startsWith('goal-')).sort((a: string, b: string) => Number(a.slice(5)) - Number(b.slice(5))),
    ).toEqual(Array.from({ length: 30 }, (_, i) => `goal-${i + 1}`))
  })

  it('replays a batch sent again with the same Idempotency-Key', async () => {
    const p = await seeded()
    const mutations = [{ action: 'add', node: { type: 'goal', data: { label: 'Once' } } }]
    const first = await batch(p, mutations, { 'idempotency-key': 'batch-once' })
    const again = await batch(p, mutations, { 'idempotency-key': 'batch-once' })
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect((await listNodes(p)).filter((n: any) => n.data.label === 'Once')).toHaveLength(1)
  })
})
