import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { outboxOf, save } from '../src/events/outbox'
import type { ChangeDraft } from '../src/history/model'
import { insertAddChunk, insertChunk, insertOne } from '../src/history/queries'
import { addParams, changeParams, oneChangeParams, recordChanges } from '../src/history/record'
import type { Actor } from '../src/ports/actor'
import { startApp } from './helpers'

// history.md, 2: a write's changes are stored by one statement of two (bench/writes.md, the
// eleventh pass): a write's only change, each field a parameter (sql/history/insert-one.sql), more
// as one JSON array (sql/history/insert-many.sql). Whichever stores it, a change must read back the
// same; and each of them keeps the rule the table's check held before migration 0042 (a target is
// a node or an iteration), by its cast to the domain change_target_kind. The saving step sends
// them beside the events' statement, both before either answers (src/events/outbox.ts `save`):
// a change refused refuses the write, and neither its events nor its changes stay.
const app = await startApp()
afterAll(() => app.close())

const actor: Actor = { userId: 'usr_1', userName: 'Ann "the" tester', keyId: 'key_1', agent: 'bot/1.0', via: 'mcp' }

const drafts: ChangeDraft[] = [
  {
    action: 'update',
    kind: 'node',
    id: 'goal-1',
    type: 'goal',
    before: { parentId: null, data: { label: 'a', tags: ['x'], note: 'ünïcode \\ "quoted"' } },
    after: { parentId: 'goal-0', data: { label: 'b', tags: ['x'], note: 'ünïcode \\ "quoted"', n: 1.5 } },
    fields: ['parentId', 'label', 'n'],
  },
  {
    action: 'add',
    kind: 'node',
    id: 'job-2',
    type: 'job',
    before: null,
    after: { parentId: 'a-1', data: { label: 'j' } },
    fields: ['parentId', 'label'],
  },
  { action: 'delete', kind: 'node', id: 'job-3', type: 'job', before: { parentId: 'a-1', data: {} }, after: null, fields: ['parentId'] },
  {
    action: 'revert',
    kind: 'iteration',
    id: 'sprint 1',
    type: null,
    before: { name: 'sprint 1', status: 'active' },
    after: { name: 'sprint 1', status: 'done' },
    fields: ['status'],
    revertOf: 41,
  },
  {
    action: 'update',
    kind: 'node',
    id: 'task-4',
    type: 'task',
    before: { parentId: null, data: { label: 't' } },
    after: { parentId: null, data: { label: 'u' } },
    fields: ['label'],
    proposal: { proposalId: 'prp_1', actor: { userId: 'usr_2', userName: 'Bo', keyId: 'key_2', via: 'api' } },
  },
]

const stored = (p: string, id: number) =>
  app.db.query(
    `select project_id, user_id, user_name, key_id, agent, via, request_id, action, target_kind, target_id, target_type,
      before, after, fields, revert_of, proposal,
      -- none is SQL's null, not JSON's (which reads back the same)
      before is null as no_before, after is null as no_after, proposal is null as no_proposal, revert_of is null as no_revert
    from changes where project_id = $1 and id = $2`,
    [p, id],
  )

describe('the statements that store changes', () => {
  it('a change stored alone in plain parameters reads back as the same change in a JSON array', async () => {
    const p = await app.project()
    for (const d of drafts) {
      const one = await app.db.tx((tx) => insertOne(tx, p, oneChangeParams(actor, 'r-1', d)))
      const many = await app.db.tx((tx) => insertChunk(tx, p, changeParams(actor, 'r-1', [d])))
      expect(many).toHaveLength(1)
      const [a] = await stored(p, one)
      expect(a).toMatchObject({
        target_kind: d.kind,
        target_id: d.id,
        before: d.before,
        after: d.after,
        fields: d.fields,
        no_before: d.before === null,
        no_after: d.after === null,
        no_proposal: !d.proposal,
        no_revert: !d.revertOf,
      })
      expect(await stored(p, many[0]!)).toEqual([a])
    }
  })

  it("a node's add stored by the adds' statement reads back as the same change stored alone", async () => {
    // sql/history/insert-adds.sql: the action, the kind and the empty before are the statement's
    const p = await app.project()
    const adds: ChangeDraft[] = [drafts[1]!, { ...drafts[1]!, id: 'job-5', proposal: drafts[4]!.proposal }]
    for (const d of adds) {
      const one = await app.db.tx((tx) => insertOne(tx, p, oneChangeParams(actor, 'r-1', d)))
      const [added] = await app.db.tx((tx) => insertAddChunk(tx, p, addParams(actor, 'r-1', [d])))
      const [a] = await stored(p, one)
      expect(a).toMatchObject({ action: 'add', target_kind: 'node', target_id: d.id, after: d.after, no_before: true, no_revert: true })
      expect(a.no_proposal).toBe(!d.proposal)
      expect(await stored(p, added!)).toEqual([a])
    }
  })

  it("a write's changes go by the adds' statement only when every one is a node's add, in order either way", async () => {
    const p = await app.project()
    const adds: ChangeDraft[] = [1, 2, 3].map((i) => ({ ...drafts[1]!, id: `job-${10 + i}` }))
    const deps = { ...app.deps, author: { actor, requestId: 'r-3' } }
    for (const changes of [adds, [...adds, drafts[0]!]]) {
      const ids = await app.db.tx((tx) => recordChanges({ ...deps, db: tx }, p, changes))
      const rows = await app.db.query<{ target_id: string; action: string }>(
        'select target_id, action from changes where project_id = $1 and id = any($2::bigint[]) order by id',
        [p, ids],
      )
      expect(rows.map((r) => [r.target_id, r.action])).toEqual(changes.map((d) => [d.id, d.action]))
      expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    }
  })

  it('each refuses a target that is neither a node nor an iteration, and stores nothing', async () => {
    const p = await app.project()
    const bad = { ...drafts[0]!, kind: 'project' } as unknown as ChangeDraft
    const tries = [
      () => app.db.tx((tx) => insertOne(tx, p, oneChangeParams(actor, 'r-2', bad))),
      () => app.db.tx((tx) => insertChunk(tx, p, changeParams(actor, 'r-2', [bad]))),
    ]
    for (const attempt of tries) await expect(attempt()).rejects.toThrow(/change_target_kind/)
    expect(await app.db.query('select 1 from changes where project_id = $1', [p])).toEqual([])
  })

  it('saving a write whose change is refused refuses it: its events, sent beside, are not kept either', async () => {
    const p = await app.project()
    const [seq] = await app.db.query<{ seq: number }>('select coalesce(max(seq), 0)::int as seq from events')
    const event = { type: 'iteration.added' as const, iteration: { name: 'Bad', status: 'active' } }
    const bad = { ...drafts[0]!, kind: 'project' } as unknown as ChangeDraft
    // one change (insert-one.sql) and several (insert-many.sql), each with its events sent beside it
    for (const changes of [[bad], [drafts[1]!, bad]])
      await expect(app.db.tx((tx) => save({ ...app.deps, db: tx }, outboxOf(p, [event, event], changes)))).rejects.toThrow(
        /change_target_kind/,
      )
    expect(await app.db.query('select 1 from changes where project_id = $1', [p])).toEqual([])
    expect(await app.db.query('select 1 from events where project_id = $1 and seq > $2', [p, seq!.seq])).toEqual([])
    // and the same outbox with good changes keeps both, the change ids in the order noted
    const ids = await app.db.tx((tx) => save({ ...app.deps, db: tx }, outboxOf(p, [event], drafts.slice(0, 3))))
    expect(ids).toHaveLength(3)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    const kept = await app.db.query<{ target_id: string }>('select target_id from changes where project_id = $1 order by id', [p])
    expect(kept.map((r) => r.target_id)).toEqual(['goal-1', 'job-2', 'job-3'])
    expect(await app.db.query('select 1 from events where project_id = $1 and seq > $2', [p, seq!.seq])).toHaveLength(1)
  })

  it('every statement under sql/ that inserts changes casts the target kind to change_target_kind (migration 0042)', () => {
    const root = join(import.meta.dir, '../sql')
    const found: string[] = []
    for (const dir of readdirSync(root))
      for (const file of dir === 'migrations' ? [] : readdirSync(join(root, dir))) {
        const text = readFileSync(join(root, dir, file), 'utf8').replace(/--.*$/gm, '')
        if (!/insert\s+into\s+changes\b/i.test(text)) continue
        found.push(`${dir}/${file}`)
        expect(`${dir}/${file}: ${/::change_target_kind\b/.test(text)}`).toBe(`${dir}/${file}: true`)
      }
    expect(found).toEqual(expect.arrayContaining(['history/insert-one.sql', 'history/insert-many.sql', 'history/insert-adds.sql']))
  })
})
