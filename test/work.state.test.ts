import { afterAll, describe, expect, it } from 'bun:test'
import { migrations } from '../sql/migrations'
import type { Db } from '../src/db'
import { migrate } from '../src/db/migrate'
import { openPglite } from '../src/db/pglite'
import { openPostgres } from '../src/db/postgres'
import { startApp } from './helpers'
import { type It, type N, random, reference } from './work-reference'

// The work state kept in every write's transaction (work_items, sql/migrations/0016) against the
// readiness rule of agents-and-app.md (1) read the long way: the whole project through GET /nodes
// and GET /iterations, after each of many random writes of every kind that can change it.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>) => (await app.call('POST', '/api/v1/mutate', { body })).body

describe('the work state', () => {
  it('answers GET /ready and _meta.unblocked as the whole-project rule does, through 150 random writes of every kind', async () => {
    const p = await app.project()
    const r = random(45)
    const seed = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'addIteration', iteration: { name: 'S2' } },
        { action: 'addIteration', iteration: { name: 'S3' } },
        ...[1, 2, 3].map((g) => ({ action: 'add', node: { id: `draft-g${g}`, type: 'goal', data: { label: `G${g}` } } })),
        ...[1, 2, 3, 4, 5].map((n) => ({
          action: 'add',
          node: { id: `draft-n${n}`, type: 'need', parentId: `draft-g${1 + (n % 3)}`, data: { label: `N${n}` } },
        })),
        ...Array.from({ length: 8 }, (_, a) => ({
          action: 'add',
          node: { id: `draft-a${a}`, type: 'approach', parentId: `draft-n${1 + (a % 5)}`, data: { label: `A${a}` } },
        })),
        ...Array.from({ length: 20 }, (_, j) => ({
          action: 'add',
          node: { type: 'job', parentId: `draft-a${j % 7}`, data: { label: `J${j}`, iteration: r.pick(['S1', 'S2', 'S3', 'Later']) } },
        })),
        ...Array.from({ length: 4 }, (_, t) => ({ action: 'add', node: { type: 'task', data: { label: `T${t}` } } })),
      ],
    })
    expect(seed.success).toBe(true)
    for (let t = 1; t <= 4; t++)
      await mutate({ action: 'update', projectId: p, nodeId: `task-${t}`, data: { kind: t < 4 ? 'do-it' : 'memo' } })

    const look = async () => {
      const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes as N[]
      const iterations = (await app.call('GET', `/api/v1/iterations?projectId=${p}`)).body.iterations as It[]
      return { nodes, iterations, rule: reference(nodes, iterations) }
    }
    const deleted: string[] = []
    let renames = 0
    for (let step = 0; step < 150; step++) {
      const before = await look()
      const of = (type: string) => before.nodes.filter((n) => n.type === type).map((n) => n.id)
      const names = before.iterations.map((i) => i.name)
      const open = names.filter((n) => n !== 'Later')
      const ops: (() => Record<string, unknown> | null)[] = [
        () => ({ action: 'update', nodeId: r.pick(of('job')), data: { status: r.pick(['done', 'done', 'open']) } }),
        () => ({
          action: 'update',
          nodeId: r.pick(of('approach')),
          data: { approachStatus: r.pick(['development', 'resolved', 'retired']) },
        }),
        () => {
          const a = r.pick(of('approach'))
          const others = [...of('approach'), ...of('goal')].filter((id) => id !== a)
          return {
            action: 'update',
            nodeId: a,
            data: { blockedBy: r.next() < 0.2 ? [] : [r.pick(others), r.pick(others), 'approach-999'] },
          }
        },
        () => ({ action: 'update', nodeId: r.pick(of('goal')), data: { goalStatus: r.pick(['focus', 'later', 'done']) } }),
        () => ({ action: 'update', nodeId: r.pick(of('job')), parentId: r.pick(of('approach')), data: {} }),
        () => ({ action: 'update', nodeId: r.pick(of('approach')), parentId: r.pick(of('need')), data: {} }),
        () => ({ action: 'update', nodeId: r.pick(of('need')), parentId: r.pick(of('goal')), data: {} }),
        () => ({ action: 'update', nodeId: r.pick([...of('job'), ...of('task')]), data: { iteration: r.pick(names) } }),
        () => ({ action: 'update', nodeId: r.pick(of('task')), data: { urgent: r.next() < 0.5 } }),
        () => ({
          action: 'add',
          node: { type: 'job', parentId: r.pick(of('approach')), data: { label: 'new', iteration: r.pick(names) } },
        }),
        () => {
          const id = r.pick([...of('job'), ...of('job'), ...of('approach')])
          deleted.push(id)
          return { action: 'delete', nodeId: id }
        },
        () => (deleted.length ? { action: 'restore', nodeId: deleted.pop()! } : null),
        () =>
          open.length ? { action: 'updateIteration', iterationName: r.pick(open), data: { status: r.pick(['done', 'active']) } } : null,
        () => (open.length ? { action: 'updateIteration', iterationName: r.pick(open), data: { name: `R${++renames}` } } : null),
        () => ({ action: 'reorderIterations', order: names.toSorted(() => r.next() - 0.5) }),
        () => (open.length > 1 ? { action: 'deleteIteration', iterationName: r.pick(open) } : null),
        () => ({ action: 'addIteration', iteration: { name: `X${step}` } }),
        () => ({
          action: 'batch',
          mutations: [
            { action: 'update', nodeId: r.pick(of('job')), data: { status: 'done' } },
            { action: 'update', nodeId: r.pick(of('approach')), data: { approachStatus: r.pick(['resolved', 'development']) } },
          ],
        }),
      ]
      const body = r.pick(ops)()
      if (!body) continue
      const res = await mutate({ ...body, projectId: p })
      const what = `step ${step}: ${JSON.stringify(body)}`
      if (!res.success) continue // a refused write (a restore under a deleted parent) changes nothing
      const after = await look()
      const answer = (await app.call('GET', `/api/v1/ready?projectId=${p}&limit=100`)).body
      expect({ what, ready: answer.items.map((i: any) => i.node.id), total: answer._meta.total, blocked: answer._meta.blocked }).toEqual({
        what,
        ready: after.rule.ready,
        total: after.rule.ready.length,
        blocked: after.rule.blocked,
      })
      // the counts the writes keep (work_counts, migration 0026) equal a recount, for each iteration
      const kept = await app.db.query<{ iteration: string | null; unblocked: number; blocked: number }>(
        `select iteration, unblocked, blocked from work_counts where project_id = $1 and (unblocked <> 0 or blocked <> 0)
         order by iteration nulls first`,
        [p],
      )
      const recount = await app.db.query<{ iteration: string | null; unblocked: number; blocked: number }>(
        `select iteration, (count(*) filter (where not blocked))::integer as unblocked, (count(*) filter (where blocked))::integer as blocked
         from work_items where project_id = $1 and open group by iteration order by iteration nulls first`,
        [p],
      )
      expect({ what, counts: kept }).toEqual({ what, counts: recount })
      // one iteration's page (sql/work/ready-page-iteration.sql: work_items_ready at the iteration's
      // rank) and counts
      const one = r.pick(after.iterations).name
      const pageOne = (await app.call('GET', `/api/v1/ready?projectId=${p}&iteration=${encodeURIComponent(one)}&limit=100`)).body
      const inOne = pageOne._meta
      const ruleOne = after.nodes.filter((n) => n.data.iteration === one)
      const inIteration = new Set(ruleOne.map((n) => n.id))
      expect({ what, one, ready: pageOne.items.map((i: any) => i.node.id), total: inOne.total, blocked: inOne.blocked }).toEqual({
        what,
        one,
        ready: after.rule.ready.filter((id) => inIteration.has(id)),
        total: ruleOne.filter((n) => after.rule.states.get(n.id) === 'ready').length,
        blocked: ruleOne.filter((n) => after.rule.states.get(n.id) === 'blocked').length,
      })
      if (res._meta?.unblocked !== undefined) {
        const made = [...after.rule.states].flatMap(([id, s]) => (s === 'ready' && before.rule.states.get(id) === 'blocked' ? [id] : []))
        expect({ what, unblocked: res._meta.unblocked.toSorted() }).toEqual({ what, unblocked: made.toSorted() })
      }
    }
  }, 120_000)
})

describe('the migration of the work state', () => {
  it('fills it for the work items a database already holds', async () => {
    const PG_URL = process.env.TEST_DATABASE_URL
    const name = `arbor_test_work_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    let drop = async () => {}
    let db: Db
    if (!PG_URL) db = await openPglite(null)
    else {
      const admin = await openPostgres(PG_URL)
      await admin.exec(`create database ${name}`)
      const url = new URL(PG_URL)
      url.pathname = `/${name}`
      db = await openPostgres(url.toString())
      drop = async () => {
        await admin.exec(`drop database if exists ${name} with (force)`)
        await admin.close()
      }
    }
    try {
      const at = migrations.findIndex((m) => m.name === '0016-work-state')
      await migrate(db, migrations[at - 1]!.name)
      await db.exec(`
        insert into users (id, name) values ('u1', 'U');
        insert into projects (id, name, owner_id) values ('p1', 'P', 'u1');
        insert into iterations (project_id, name, system, sort_order) values ('p1', 'Later', true, 0), ('p1', 'S1', false, 1);
        insert into nodes (project_id, id, type, parent_id, data) values
          ('p1', 'goal-1', 'goal', null, '{"label":"G","goalStatus":"focus"}'),
          ('p1', 'need-1', 'need', 'goal-1', '{"label":"N"}'),
          ('p1', 'approach-1', 'approach', 'need-1', '{"label":"A1"}'),
          ('p1', 'approach-2', 'approach', 'need-1', '{"label":"A2","blockedBy":["approach-1"]}'),
          ('p1', 'job-1', 'job', 'approach-1', '{"label":"J1","iteration":"S1"}'),
          ('p1', 'job-2', 'job', 'approach-1', '{"label":"J2","status":"done"}'),
          ('p1', 'job-3', 'job', 'approach-2', '{"label":"J3","iteration":"Later"}'),
          ('p1', 'task-1', 'task', null, '{"label":"T1","kind":"do-it","urgent":true}'),
          ('p1', 'task-2', 'task', null, '{"label":"T2","kind":"memo"}');
      `)
      await migrate(db)
      // the ranks of Later and of no iteration are fixed numbers above every position (work_iter_ranks)
      const [LATER, LAST] = [1_000_000_000, 2_000_000_000]
      const rows = await db.query(
        'select node_id, approach_id, goal_id, open, blocked, urgent, iter_rank, focus from work_items order by node_id',
      )
      expect(rows).toEqual([
        { node_id: 'job-1', approach_id: 'approach-1', goal_id: 'goal-1', open: true, blocked: false, urgent: 1, iter_rank: 0, focus: 0 },
        {
          node_id: 'job-2',
          approach_id: 'approach-1',
          goal_id: 'goal-1',
          open: false,
          blocked: false,
          urgent: 1,
          iter_rank: LAST,
          focus: 0,
        },
        {
          node_id: 'job-3',
          approach_id: 'approach-2',
          goal_id: 'goal-1',
          open: true,
          blocked: true,
          urgent: 1,
          iter_rank: LATER,
          focus: 0,
        },
        { node_id: 'task-1', approach_id: null, goal_id: null, open: true, blocked: false, urgent: 0, iter_rank: LAST, focus: 1 },
      ])
      // and GET /ready's counts (migration 0026) for them: job-1 and task-1 open, job-3 blocked
      expect(await db.query('select iteration, unblocked, blocked from work_counts order by iteration nulls first')).toEqual([
        { iteration: null, unblocked: 1, blocked: 0 },
        { iteration: 'Later', unblocked: 0, blocked: 1 },
        { iteration: 'S1', unblocked: 1, blocked: 0 },
      ])
    } finally {
      await db.close()
      await drop()
    }
  }, 60_000)
})
