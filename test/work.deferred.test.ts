import { afterAll, describe, expect, it } from 'bun:test'
import { startApp } from './helpers'
import { type N, random, reference } from './work-reference'

// A batch or a revert sets its work-state changes aside and recomputes them once at its end
// (sql/migrations/0023-work-deferred.sql), and a batch whose blockedBy can close no cycle skips
// the walk of each entry (src/nodes/cycle-free.ts). Both must answer exactly as before: GET
// /ready, the blocked count and _meta.unblocked as the whole-project rule reads them, and the
// same refusals for a cycle.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>) => (await app.call('POST', '/api/v1/mutate', { body })).body

async function look(p: string) {
  const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as N[]
  const iterations = (await app.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations
  return { nodes, rule: reference(nodes, iterations) }
}

async function plan(approaches: number, jobsEach: number) {
  const p = await app.project()
  const res = await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      ...Array.from({ length: approaches }, (_, a) => ({
        action: 'add',
        node: { id: `draft-a${a}`, type: 'approach', parentId: 'draft-n', data: { label: `A${a}` } },
      })),
      ...Array.from({ length: approaches * jobsEach }, (_, j) => ({
        action: 'add',
        node: { type: 'job', parentId: `draft-a${j % approaches}`, data: { label: `J${j}` } },
      })),
    ],
  })
  expect(res.success).toBe(true)
  return p
}

describe('the work state of a batch, recomputed once at its end', () => {
  it('answers GET /ready, blocked and _meta.unblocked as the whole-project rule does, through 40 random batches', async () => {
    const p = await plan(20, 2)
    const r = random(50)
    for (let step = 0; step < 40; step++) {
      const before = await look(p)
      const of = (type: string) => before.nodes.filter((n) => n.type === type).map((n) => n.id)
      const apps = of('approach')
      const entries: Record<string, unknown>[] = []
      const size = 1 + Math.floor(r.next() * 30)
      for (let e = 0; e < size; e++) {
        const kind = r.next()
        if (kind < 0.35) {
          // a chain: each blocked by later ones only (never a cycle), or by nothing
          const i = Math.floor(r.next() * apps.length)
          const later = apps.slice(i + 1)
          entries.push({ action: 'update', nodeId: apps[i], data: { blockedBy: later.filter(() => r.next() < 0.5).slice(0, 50) } })
        } else if (kind < 0.6)
          entries.push({ action: 'update', nodeId: r.pick(of('job')), data: { status: r.pick(['done', 'done', 'open']) } })
        else if (kind < 0.75)
          entries.push({ action: 'update', nodeId: r.pick(apps), data: { approachStatus: r.pick(['development', 'resolved', 'retired']) } })
        else if (kind < 0.85) entries.push({ action: 'add', node: { type: 'job', parentId: r.pick(apps), data: { label: `new ${step}` } } })
        else if (kind < 0.92) entries.push({ action: 'update', nodeId: r.pick(of('job')), parentId: r.pick(apps), data: {} })
        else entries.push({ action: 'update', nodeId: r.pick(of('goal')), data: { goalStatus: r.pick(['focus', 'later', 'done']) } })
      }
      const res = await mutate({ action: 'batch', projectId: p, mutations: entries })
      const what = `step ${step}: ${JSON.stringify(entries).slice(0, 300)}`
      expect({ what, success: res.success }).toEqual({ what, success: true })
      const after = await look(p)
      const answer = (await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body
      expect({ what, ready: answer.items.map((i: any) => i.node.id), blocked: answer._meta.blocked }).toEqual({
        what,
        ready: after.rule.ready,
        blocked: after.rule.blocked,
      })
      if (res._meta?.unblocked !== undefined) {
        const made = [...after.rule.states].flatMap(([id, s]) => (s === 'ready' && before.rule.states.get(id) === 'blocked' ? [id] : []))
        expect({ what, unblocked: res._meta.unblocked.toSorted() }).toEqual({ what, unblocked: made.toSorted() })
      }
    }
  }, 180_000)

  it('recomputes what a revert took back, once, and a dry run leaves the work state as it was', async () => {
    const p = await plan(6, 1)
    const done = await app.call('POST', '/api/v1/mutate', {
      headers: { prefer: 'change-ids' },
      body: {
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'update', nodeId: 'approach-1', data: { blockedBy: ['approach-2', 'approach-3'] } },
          { action: 'update', nodeId: 'job-2', data: { status: 'done' } },
          { action: 'update', nodeId: 'job-3', data: { status: 'done' } },
        ],
      },
    })
    expect(done.body.success).toBe(true)
    const changeIds = done.body.changeIds
    expect(changeIds).toHaveLength(3)
    const ready = async () => (await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body.items.map((i: any) => i.node.id)
    expect(await ready()).toEqual(['job-1', 'job-4', 'job-5', 'job-6'])
    const dry = await mutate({ action: 'revert', projectId: p, changeIds, dryRun: true })
    expect(dry.success).toBe(true)
    expect(await ready()).toEqual(['job-1', 'job-4', 'job-5', 'job-6'])
    const back = await mutate({ action: 'revert', projectId: p, changeIds })
    expect(back.success).toBe(true)
    // job-2 and job-3 open again, and approach-1 no longer blocked: every job ready
    expect(await ready()).toEqual(['job-1', 'job-2', 'job-3', 'job-4', 'job-5', 'job-6'])
    const { rule } = await look(p)
    expect(await ready()).toEqual(rule.ready)
  })

  it('recomputes at the commit a transaction that set its changes aside and never flushed them', async () => {
    const p = await plan(2, 1)
    await mutate({ action: 'update', projectId: p, nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } })
    const ready = async () => (await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body.items.map((i: any) => i.node.id)
    expect(await ready()).toEqual(['job-2'])
    await app.db.tx(async (tx) => {
      await tx.query(`select set_config('arbor.work_defer', 'on', true)`)
      await tx.query(`update nodes set data = jsonb_set(data, '{status}', '"done"') where project_id = $1 and id = 'job-2'`, [p])
      // set aside, not yet recomputed
      const [row] = await tx.query<{ open: boolean }>(`select open from work_items where project_id = $1 and node_id = 'job-2'`, [p])
      expect(row!.open).toBe(true)
    })
    const rows = await app.db.query<{ node_id: string; open: boolean; blocked: boolean }>(
      `select node_id, open, blocked from work_items where project_id = $1 order by node_id`,
      [p],
    )
    expect(rows).toEqual([
      { node_id: 'job-1', open: true, blocked: false },
      { node_id: 'job-2', open: false, blocked: false },
    ])
    expect(await app.db.query(`select 1 from work_pending`)).toEqual([])
  })
})

describe('the cycle check of a batch', () => {
  it('refuses the entry that closes a cycle, with its path, as the walk of each entry did', async () => {
    const p = await plan(4, 0)
    const res = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'update', nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } },
        { action: 'update', nodeId: 'approach-2', data: { blockedBy: ['approach-3'] } },
        { action: 'update', nodeId: 'approach-3', data: { blockedBy: ['approach-1'] } },
      ],
    })
    expect(res.errors).toEqual([
      'mutations[2]: blockedBy would make a cycle (each blocked by the next): approach-3 → approach-1 → approach-2 → approach-3',
    ])
  })

  it('takes a batch whose blockedBy together would loop but never do at any step', async () => {
    const p = await plan(3, 0)
    const res = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'update', nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } },
        { action: 'update', nodeId: 'approach-1', data: { blockedBy: [] } },
        { action: 'update', nodeId: 'approach-2', data: { blockedBy: ['approach-1'] } },
      ],
    })
    expect(res.success).toBe(true)
  })

  it('finds a cycle through a stored blockedBy and a draft added in the same batch', async () => {
    const p = await plan(2, 0)
    await mutate({ action: 'update', projectId: p, nodeId: 'approach-1', data: { blockedBy: ['approach-2'] } })
    const res = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-x', type: 'approach', parentId: 'need-1', data: { label: 'X', blockedBy: ['approach-1'] } } },
        { action: 'update', nodeId: 'approach-2', data: { blockedBy: ['draft-x'] } },
      ],
    })
    expect(res.errors).toEqual([
      'mutations[1]: blockedBy would make a cycle (each blocked by the next): approach-2 → approach-3 → approach-1 → approach-2',
    ])
  })

  it('finds a cycle through an id the batch made, named by the id it was given', async () => {
    const p = await plan(2, 0)
    const res = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { id: 'draft-x', type: 'approach', parentId: 'need-1', data: { label: 'X', blockedBy: ['approach-1'] } } },
        { action: 'update', nodeId: 'approach-1', data: { blockedBy: ['approach-3'] } },
      ],
    })
    expect(res.errors).toEqual([
      'mutations[1]: blockedBy would make a cycle (each blocked by the next): approach-1 → approach-3 → approach-1',
    ])
  })
})
