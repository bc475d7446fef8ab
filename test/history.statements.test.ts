import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { insertWithChanges } from '../src/events/queries'
import type { ChangeDraft } from '../src/history/model'
import { insertChunk } from '../src/history/queries'
import { changeParams, oneChangeParams } from '../src/history/record'
import type { Actor } from '../src/ports/actor'
import { startApp } from './helpers'

// history.md, 2: a write's changes are stored by one statement of three (bench/writes.md, the
// eleventh pass): a write's only change, each field a parameter (sql/events/insert-with-change.sql),
// more as one JSON array with the events (sql/events/insert-with-changes.sql) or alone
// (sql/history/insert-many.sql). Whichever stores it, a change must read back the same; and each
// of them keeps the rule the table's check held before migration 0042 (a target is a node or an
// iteration), by its cast to the domain change_target_kind.
const app = await startApp()
afterAll(() => app.close())

const actor: Actor = { userId: 'usr_1', userName: 'Ann "the" tester', keyId: 'key_1', agent: 'bot/1.0', via: 'mcp' }
const event = (id: string) => [{ type: 'node.updated', payload: { event: 'node.updated', node: { id } } }]

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
      const one = await app.db.tx((tx) => insertWithChanges(tx, p, { one: true, params: oneChangeParams(actor, 'r-1', d) }, event(d.id)))
      const many = await app.db.tx((tx) => insertWithChanges(tx, p, { one: false, params: changeParams(actor, 'r-1', [d]) }, event(d.id)))
      const alone = await app.db.tx((tx) => insertChunk(tx, p, changeParams(actor, 'r-1', [d])))
      expect(one.changeIds).toHaveLength(1)
      expect(one.seqs).toHaveLength(1)
      const [a] = await stored(p, one.changeIds[0]!)
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
      expect(await stored(p, many.changeIds[0]!)).toEqual([a])
      expect(await stored(p, alone[0]!)).toEqual([a])
    }
  })

  it('each refuses a target that is neither a node nor an iteration, and stores nothing', async () => {
    const p = await app.project()
    const bad = { ...drafts[0]!, kind: 'project' } as unknown as ChangeDraft
    const tries = [
      () => app.db.tx((tx) => insertWithChanges(tx, p, { one: true, params: oneChangeParams(actor, 'r-2', bad) }, event('x'))),
      () => app.db.tx((tx) => insertWithChanges(tx, p, { one: false, params: changeParams(actor, 'r-2', [bad]) }, event('x'))),
      () => app.db.tx((tx) => insertChunk(tx, p, changeParams(actor, 'r-2', [bad]))),
    ]
    for (const attempt of tries) await expect(attempt()).rejects.toThrow(/change_target_kind/)
    expect(await app.db.query('select 1 from changes where project_id = $1', [p])).toEqual([])
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
    expect(found).toEqual(
      expect.arrayContaining(['events/insert-with-change.sql', 'events/insert-with-changes.sql', 'history/insert-many.sql']),
    )
  })
})
