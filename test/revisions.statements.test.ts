import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as q from '../src/nodes/queries'
import { seedPlan, startApp } from './helpers'

// live.md, 1: a node's rev moves with each change of its data or parent and only then, and its
// field revs give each changed field that rev. Since migration 0040 the statements that update a
// node set them (no trigger does): these are the rules they must keep, checked statement by
// statement against what changed, computed here.
const app = await startApp()
afterAll(() => app.close())

type Row = { id: string; parent_id: string | null; data: Record<string, unknown>; rev: string; field_revs: Record<string, unknown> }
const row = async (p: string, id: string) =>
  (
    await app.db.query<Row>('select id, parent_id, data, rev::text as rev, field_revs from nodes where project_id = $1 and id = $2', [
      p,
      id,
    ])
  )[0]!

/** JSON with every object's keys sorted: equal for two values jsonb holds equal (these tests' values: no big numbers) */
const canon = (v: unknown): string =>
  v === null || typeof v !== 'object'
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(canon).join(',')}]`
      : `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`)
          .join(',')}}`

/** what the statement must leave: the fields that changed, each with the new rev, over the old field revs */
function expectRevs(before: Row, after: Row, data: Record<string, unknown>, parentId: string | null) {
  const changed = [...new Set([...Object.keys(before.data), ...Object.keys(data)])].filter(
    (k) => !(k in before.data && k in data && canon(before.data[k]) === canon(data[k])),
  )
  if (parentId !== before.parent_id) changed.push('parentId')
  if (!changed.length) {
    expect(after.rev).toBe(before.rev)
    expect(after.field_revs).toEqual(before.field_revs)
    return
  }
  expect(BigInt(after.rev)).toBeGreaterThan(BigInt(before.rev))
  expect(after.field_revs).toEqual({ ...before.field_revs, ...Object.fromEntries(changed.map((k) => [k, Number(after.rev)])) })
}

const values: unknown[] = ['a', 'b', 1, 2.5, true, null, [1, 2], [2, 1], { x: 1, y: [1, 2] }, { y: [1, 2], x: 1 }, { x: 2 }]
const keys = ['label', 'description', 'status', 'tags', 'meta']
let seed = 7
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
}
const pick = <T>(xs: T[]) => xs[rand(xs.length)]!

describe('the statements that update a node', () => {
  it('sql/nodes/update.sql: a new rev for a change of data or parent and only then, each changed field given it, whatever the hint', async () => {
    const p = await app.project()
    const add = async (label: string) =>
      (await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node: { type: 'goal', data: { label } } } })).body
        .node.id as string
    const id = await add('g')
    const other = await add('h')
    for (let i = 0; i < 300; i++) {
      const before = await row(p, id)
      const data: Record<string, unknown> = { ...before.data }
      const edits = rand(3) // none (a write that changes nothing), one or two keys
      for (let e = 0; e < edits; e++) {
        const k = pick(keys)
        if (rand(5) === 0) delete data[k]
        else data[k] = pick(values)
      }
      const parentId = rand(6) === 0 ? (before.parent_id ? null : other) : before.parent_id
      // the hint: none, a key set, another key, a key the data does not have
      const hint = pick([null, pick(keys), 'label', 'nothing'])
      await q.update(app.db, p, id, parentId, data, false, hint)
      const after = await row(p, id)
      expect(canon(after.data)).toBe(canon(data))
      expectRevs(before, after, data, parentId)
    }
  })

  it('the classifier (set-classified, set-classified-many) and an iteration renamed (move-iteration) keep them too', async () => {
    const p = await seedPlan(app, [
      { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'J', iteration: 'S1' } },
      ...['t1', 't2', 't3'].map((label) => ({ id: `draft-${label}`, type: 'task', data: { label } })),
    ])
    const tasks = (
      await app.db.query<{ id: string }>(`select id from nodes where project_id = $1 and type = 'task' order by data ->> 'label'`, [p])
    ).map((r) => r.id)
    expect(tasks.length).toBe(3)

    let before = await row(p, tasks[0]!)
    const data = { ...before.data, kind: 'do-it' }
    await q.setClassified(app.db, p, tasks[0]!, data)
    expectRevs(before, await row(p, tasks[0]!), data, before.parent_id)
    before = await row(p, tasks[0]!)
    await q.setClassified(app.db, p, tasks[0]!, before.data) // the same data: no change
    expectRevs(before, await row(p, tasks[0]!), before.data, before.parent_id)

    const befores = await Promise.all(tasks.map((t) => row(p, t)))
    const datas = befores.map((b, i) => (i === 2 ? b.data : { ...b.data, kind: 'think', label: `x${i}` }))
    await q.setClassifiedMany(
      app.db,
      tasks.map((id, i) => ({ project_id: p, id, data: datas[i] })),
    )
    const afters = await Promise.all(tasks.map((t) => row(p, t)))
    for (const [i, b] of befores.entries()) expectRevs(b, afters[i]!, datas[i]!, b.parent_id)
    expect(afters[0]!.rev).not.toBe(afters[1]!.rev) // a rev of its own for each row

    const setIteration = (id: string, iteration: string) =>
      app.db.query(
        `update nodes set data = data || jsonb_build_object('iteration', $3::text), rev = rev where project_id = $1 and id = $2`,
        [p, id, iteration],
      )
    await setIteration(tasks[1]!, 'S1')
    await setIteration(tasks[2]!, 'S1')
    const movedBefore = await Promise.all(tasks.map((t) => row(p, t)))
    await q.moveIteration(app.db, p, 'S1', 'S2')
    const moved = await Promise.all(tasks.map((t) => row(p, t)))
    for (const [i, b] of movedBefore.entries()) expectRevs(b, moved[i]!, i ? { ...b.data, iteration: 'S2' } : b.data, b.parent_id)
    await q.moveIteration(app.db, p, 'S2', 'S2') // a rename to the same name changes nothing
    const same = await Promise.all(tasks.map((t) => row(p, t)))
    for (const [i, b] of moved.entries()) expectRevs(b, same[i]!, b.data, b.parent_id)
  })

  it('every statement under sql/ that updates a node’s data or parent sets rev and field_revs', () => {
    const root = join(import.meta.dir, '../sql')
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql') && !f.startsWith('migrations'))
    const offenders: string[] = []
    let seen = 0
    for (const f of files) {
      const text = readFileSync(join(root, f), 'utf8').replace(/--.*$/gm, '')
      for (const m of text.matchAll(/update\s+nodes\b[\s\S]*?\bset\b([\s\S]*?)(\bwhere\b|\breturning\b|;|$)/gi)) {
        const set = m[1]!
        if (!/\b(data|parent_id)\s*=/.test(set)) continue
        seen++
        if (!/\brev\s*=/.test(set) || !/\bfield_revs\s*=/.test(set)) offenders.push(f)
      }
    }
    expect(seen).toBeGreaterThanOrEqual(4)
    expect(offenders).toEqual([])
  })
})
