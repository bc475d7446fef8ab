import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'

// issue 3 item 9: every change to a node or an iteration writes its event to the `events`
// outbox in the same transaction, with exactly the webhook payload of api.md (Events)
const app = await startApp()
afterAll(() => app.close())

const mutate = (body: unknown) => app.call('POST', '/api/v1/mutate', { body })
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** The events written by `fn`, as {type, payload}, in order. */
async function eventsOf(projectId: string, fn: () => Promise<unknown>) {
  const [{ seq }] = await app.db.query<{ seq: number }>('select coalesce(max(seq), 0)::int as seq from events')
  await fn()
  const rows = await app.db.query<{ type: string; payload: any; project_id: string }>(
    'select type, payload, project_id from events where seq > $1 order by seq',
    [seq],
  )
  for (const r of rows) {
    expect(r.project_id).toBe(projectId)
    expect(r.payload.timestamp).toMatch(ISO)
    expect(r.payload.event).toBe(r.type)
    expect(r.payload.project_id).toBe(projectId)
    // history.md, 4: who made the write (no keyId)
    expect(r.payload.actor).toEqual({ userId: expect.stringMatching(/^usr_/), userName: 'owner', via: 'api' })
  }
  // timestamp and actor checked above; the rest is compared whole
  return rows.map((r) => {
    const { timestamp, actor, ...payload } = r.payload
    return payload
  })
}
const nodeEvent = (event: string, p: string, node: Record<string, unknown>) => ({
  event,
  project_id: p,
  node: { ...node, rev: expect.any(String) },
})
const iterationEvent = (event: string, p: string, iteration: unknown) => ({ event, project_id: p, iteration })

async function seeded() {
  const p = await app.project()
  await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } } },
      { action: 'add', node: { type: 'task', data: { label: 'T', iteration: 'S1' } } },
    ],
  })
  return p
}

describe('node events', () => {
  it('add writes node.added with the node as created', async () => {
    const p = await seeded()
    const events = await eventsOf(p, () => mutate({ action: 'add', projectId: p, node: { type: 'task', data: { label: 'New' } } }))
    expect(events).toEqual([
      nodeEvent('node.added', p, { id: 'task-2', type: 'task', parentId: null, data: { label: 'New', iteration: 'Later' } }),
    ])
  })

  it('update writes node.updated with the node after the change', async () => {
    const p = await seeded()
    const events = await eventsOf(p, () =>
      mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { label: 'J2', maturity: 'mvp' } }),
    )
    expect(events).toEqual([
      nodeEvent('node.updated', p, {
        id: 'job-1',
        type: 'job',
        parentId: 'approach-1',
        data: { label: 'J2', iteration: 'S1', maturity: 'mvp' },
      }),
    ])
  })

  it('delete writes node.deleted for the node and each node removed beneath it', async () => {
    const p = await seeded()
    const events = await eventsOf(p, () => mutate({ action: 'delete', projectId: p, nodeId: 'need-1' }))
    expect(events).toEqual([
      nodeEvent('node.deleted', p, { id: 'need-1', type: 'need', parentId: 'goal-1', data: { label: 'N' } }),
      nodeEvent('node.deleted', p, { id: 'approach-1', type: 'approach', parentId: 'need-1', data: { label: 'A' } }),
      nodeEvent('node.deleted', p, { id: 'job-1', type: 'job', parentId: 'approach-1', data: { label: 'J', iteration: 'S1' } }),
    ])
  })

  it('restore writes node.added for the node brought back', async () => {
    const p = await seeded()
    await mutate({ action: 'delete', projectId: p, nodeId: 'task-1' })
    const events = await eventsOf(p, () => mutate({ action: 'restore', projectId: p, nodeId: 'task-1' }))
    expect(events).toEqual([
      nodeEvent('node.added', p, { id: 'task-1', type: 'task', parentId: null, data: { label: 'T', iteration: 'S1' } }),
    ])
  })

  it('classify writes node.updated with the kind', async () => {
    const p = await seeded()
    const events = await eventsOf(p, () => mutate({ action: 'classify', projectId: p, nodeId: 'task-1' }))
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ event: 'node.updated', node: { id: 'task-1', data: { label: 'T', iteration: 'S1' } } })
    expect(['memo', 'do-it']).toContain(events[0]!.node.data.kind)
  })

  it('a batch writes its events in the order it applied its entries, addIteration first', async () => {
    const p = await seeded()
    const events = await eventsOf(p, () =>
      mutate({
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'update', nodeId: 'goal-1', data: { description: 'd' } },
          { action: 'add', node: { type: 'task', data: { label: 'T2', iteration: 'S2' } } },
          { action: 'addIteration', iteration: { name: 'S2' } },
          { action: 'delete', nodeId: 'task-1' },
        ],
      }),
    )
    expect(events).toEqual([
      iterationEvent('iteration.added', p, { name: 'S2', status: 'active' }),
      nodeEvent('node.updated', p, { id: 'goal-1', type: 'goal', parentId: null, data: { label: 'G', description: 'd' } }),
      nodeEvent('node.added', p, { id: 'task-2', type: 'task', parentId: null, data: { label: 'T2', iteration: 'S2' } }),
      nodeEvent('node.deleted', p, { id: 'task-1', type: 'task', parentId: null, data: { label: 'T', iteration: 'S1' } }),
    ])
  })

  it('a rejected write writes no event', async () => {
    const p = await seeded()
    expect(await eventsOf(p, () => mutate({ action: 'update', projectId: p, nodeId: 'approach-1', data: { kano: 'bogus' } }))).toEqual([])
    expect(
      await eventsOf(p, () =>
        mutate({
          action: 'batch',
          projectId: p,
          mutations: [
            { action: 'delete', nodeId: 'task-1' },
            { action: 'delete', nodeId: 'task-9' },
          ],
        }),
      ),
    ).toEqual([])
  })
})

describe('iteration events', () => {
  it('addIteration writes iteration.added with name and status', async () => {
    const p = await seeded()
    expect(await eventsOf(p, () => mutate({ action: 'addIteration', projectId: p, iteration: { name: 'Old', status: 'done' } }))).toEqual([
      iterationEvent('iteration.added', p, { name: 'Old', status: 'done' }),
    ])
  })

  it('a rename writes iteration.updated with the new name and previous_name, no status, and node.updated for each job and task', async () => {
    const p = await seeded()
    const events = await eventsOf(p, () =>
      mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { name: 'Sprint 1' } }),
    )
    expect(events).toEqual([
      iterationEvent('iteration.updated', p, { name: 'Sprint 1', previous_name: 'S1' }),
      nodeEvent('node.updated', p, { id: 'job-1', type: 'job', parentId: 'approach-1', data: { label: 'J', iteration: 'Sprint 1' } }),
      nodeEvent('node.updated', p, { id: 'task-1', type: 'task', parentId: null, data: { label: 'T', iteration: 'Sprint 1' } }),
    ])
  })

  it('a status change writes iteration.updated with status', async () => {
    const p = await seeded()
    expect(
      await eventsOf(p, () => mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { status: 'done' } })),
    ).toEqual([iterationEvent('iteration.updated', p, { name: 'S1', status: 'done' })])
    expect(
      await eventsOf(p, () =>
        mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { status: 'active', name: 'S1 again' } }),
      ),
    ).toEqual([
      iterationEvent('iteration.updated', p, { name: 'S1 again', status: 'active', previous_name: 'S1' }),
      nodeEvent('node.updated', p, { id: 'job-1', type: 'job', parentId: 'approach-1', data: { label: 'J', iteration: 'S1 again' } }),
      nodeEvent('node.updated', p, { id: 'task-1', type: 'task', parentId: null, data: { label: 'T', iteration: 'S1 again' } }),
    ])
  })

  it('changing only gitTags or the order writes no event (neither a rename nor a status change)', async () => {
    const p = await seeded()
    expect(
      await eventsOf(p, () => mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { gitTags: ['v1'] } })),
    ).toEqual([])
    expect(await eventsOf(p, () => mutate({ action: 'reorderIterations', projectId: p, order: ['S1', 'Later'] }))).toEqual([])
  })

  it('deleteIteration writes iteration.deleted and node.updated for each job and task moved to Later', async () => {
    const p = await seeded()
    expect(await eventsOf(p, () => mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S1' }))).toEqual([
      iterationEvent('iteration.deleted', p, { name: 'S1', status: 'active' }),
      nodeEvent('node.updated', p, { id: 'job-1', type: 'job', parentId: 'approach-1', data: { label: 'J', iteration: 'Later' } }),
      nodeEvent('node.updated', p, { id: 'task-1', type: 'task', parentId: null, data: { label: 'T', iteration: 'Later' } }),
    ])
  })
})

describe('same transaction', () => {
  it('a change whose event cannot be written is not committed either', async () => {
    // a real failure in the outbox insert: the node written just before must roll back with it
    await app.db.exec(`
      create or replace function arbor_test_no_event() returns trigger language plpgsql as $$
      begin
        if new.payload -> 'node' -> 'data' ->> 'label' = 'NO EVENT' then raise exception 'outbox refused'; end if;
        return new;
      end $$;
      create trigger arbor_test_no_event before insert on events for each row execute function arbor_test_no_event();
    `)
    const p = await seeded()
    const add = await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'NO EVENT' } } })
    expect(add.status).toBe(500)
    const update = await mutate({ action: 'update', projectId: p, nodeId: 'goal-1', data: { label: 'NO EVENT' } })
    expect(update.status).toBe(500)
    const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${p}&type=goal`)).body.nodes
    expect(nodes).toEqual([{ id: 'goal-1', rev: expect.any(String), type: 'goal', parentId: null, data: { label: 'G' } }])
    await app.db.exec('drop trigger arbor_test_no_event on events')
    // the id the failed add had taken is free again: it was rolled back too
    expect((await mutate({ action: 'add', projectId: p, node: { type: 'goal', data: { label: 'ok' } } })).body.node.id).toBe('goal-2')
  })
})
