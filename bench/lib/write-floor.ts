// The floor of a write (bench/writes.ts): a bare Bun process that answers POST / by running the
// SQL statements a write needs and nothing else, through src/db (the same drivers, the app's own
// SQL files: reserve the node's id (sql/nodes/allocate-ids.sql), write the node
// (sql/nodes/insert-many.sql or update.sql; an update first locks and reads the node,
// sql/nodes/lock-many.sql) and its change and event (history's sql/history/insert-one.sql, or
// insert-many.sql for several, and the events' sql/events/insert-many.sql, sent together as the
// app's saving step sends them), in one
// transaction. A delete does what any delete that keeps the contract must (api.md: the named node
// kept in the changelog; history.md: a change with its `before` for every node removed;
// agents-and-app.md 3: `_meta.unblocked`): whether the project had blocked work
// (sql/work/has-blocked.sql, sent with the next statement), the node and everything beneath it
// (sql/nodes/subtree.sql), their delete with the changelog entry (sql/nodes/delete-many.sql, the named node logged), a
// change and an event each, and when work was blocked the work items it made ready
// (sql/work/unblocked.sql). The database's own triggers (the work state, revisions, counts, the
// claims' and children's cascades) run as they do for the app. No auth, no validation, no routing
// beyond the op, no search outbox, no cache.
//
//   DATA_DIR=… | DATABASE_URL=… PORT=… bun bench/lib/write-floor.ts   (prints "listening <url>")

import eventsSql from '../../sql/events/insert-many.sql' with { type: 'text' }
import changesSql from '../../sql/history/insert-many.sql' with { type: 'text' }
import changeSql from '../../sql/history/insert-one.sql' with { type: 'text' }
import counterSql from '../../sql/nodes/allocate-ids.sql' with { type: 'text' }
import deleteManySql from '../../sql/nodes/delete-many.sql' with { type: 'text' }
import insertManySql from '../../sql/nodes/insert-many.sql' with { type: 'text' }
import lockManySql from '../../sql/nodes/lock-many.sql' with { type: 'text' }
import subtreeSql from '../../sql/nodes/subtree.sql' with { type: 'text' }
import updateSql from '../../sql/nodes/update.sql' with { type: 'text' }
import hasBlockedSql from '../../sql/work/has-blocked.sql' with { type: 'text' }
import unblockedSql from '../../sql/work/unblocked.sql' with { type: 'text' }
import { type Db, openDb } from '../../src/db'
import type { ChangeDraft } from '../../src/history/model'
import { changeParams, oneChangeParams } from '../../src/history/record'
import type { Actor } from '../../src/ports/actor'

const db: Db = await openDb({
  dataDir: process.env.DATA_DIR,
  ...(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {}),
} as Parameters<typeof openDb>[0])

interface Body {
  op: 'add' | 'update' | 'delete' | 'batch'
  projectId: string
  type?: string
  parentId?: string | null
  nodeId?: string
  label?: string
  count?: number
}

const actor: Actor = { userId: 'floor', userName: 'floor', keyId: null, via: 'api' }
const record = (tx: Db, projectId: string, changes: ChangeDraft[], events: unknown[]) =>
  Promise.all([
    // one change in plain parameters, as the app sends a write's only change (since migration 0042)
    changes.length === 1
      ? tx.query(changeSql, [projectId, ...oneChangeParams(actor, 'floor', changes[0]!)])
      : tx.query(changesSql, [projectId, ...changeParams(actor, 'floor', changes)]),
    tx.query(eventsSql, [projectId, JSON.stringify(events)]),
  ])

async function write(b: Body) {
  return db.tx(async (tx) => {
    if (b.op === 'add' || b.op === 'batch') {
      const n = b.op === 'batch' ? (b.count ?? 100) : 1
      const [{ last }] = (await tx.query<{ last: number }>(counterSql, [b.projectId, b.type, n])) as [{ last: number }]
      const rows = Array.from({ length: n }, (_, i) => ({
        id: `${b.type}-${last - n + 1 + i}`,
        type: b.type,
        parent_id: b.parentId ?? null,
        data: { label: `${b.label ?? 'x'} ${i}` },
        created_at: null,
        classified: false,
      }))
      // the insert returns each id's rev; the node is the row sent, with it
      const revs = new Map(
        (await tx.query<{ id: string; rev: unknown }>(insertManySql, [b.projectId, JSON.stringify(rows)])).map((r) => [r.id, r.rev]),
      )
      const made = rows.map((r) => ({ ...r, rev: revs.get(r.id) }))
      await record(
        tx,
        b.projectId,
        made.map((m) => ({ action: 'add', kind: 'node', id: m.id, type: m.type ?? null, before: null, after: m, fields: [] })),
        made.map((m) => ({ type: 'node.created', payload: { node: m } })),
      )
      return { ids: made.map((m) => m.id) }
    }
    if (b.op === 'delete') return remove(tx, b.projectId, b.nodeId!)
    const [old] = await tx.query<{ id: string; type: string; parent_id: string | null; data: Record<string, unknown> }>(lockManySql, [
      b.projectId,
      [b.nodeId],
    ])
    if (!old) throw new Error(`no node ${b.nodeId}`)
    const [after] = await tx.query(updateSql, [
      b.projectId,
      b.nodeId,
      old.parent_id,
      JSON.stringify({ ...old.data, label: b.label }),
      false,
      'label',
    ])
    await record(
      tx,
      b.projectId,
      [{ action: 'update', kind: 'node', id: old.id, type: old.type, before: old, after, fields: ['label'] }],
      [{ type: 'node.updated', payload: { node: after } }],
    )
    return { node: after }
  })
}

/** a delete: the node and everything beneath it, the named node logged, a change and an event each, `_meta.unblocked` */
async function remove(tx: Db, projectId: string, nodeId: string) {
  type Row = { id: string; type: string; parent_id: string | null; data: Record<string, unknown>; depth: number }
  const [[was], rows] = await Promise.all([
    tx.query<{ blocked: boolean }>(hasBlockedSql, [projectId]),
    tx.query<Row>(subtreeSql, [projectId, [nodeId]]),
  ])
  const root = rows.find((r) => r.depth === 0)
  if (!root) throw new Error(`no node ${nodeId}`)
  const node = { id: root.id, type: root.type, parentId: root.parent_id, data: root.data }
  await tx.query(deleteManySql, [projectId, rows.map((r) => r.id), root.id, JSON.stringify(node)])
  await record(
    tx,
    projectId,
    [...rows]
      .sort((x, y) => y.depth - x.depth)
      .map((r) => ({
        action: 'delete',
        kind: 'node',
        id: r.id,
        type: r.type,
        before: { parentId: r.parent_id, data: r.data },
        after: null,
        fields: [],
      })),
    rows.map((r) => ({ type: 'node.deleted', payload: { node: r } })),
  )
  const unblocked = was?.blocked
    ? (await tx.query<{ node_id: string }>(unblockedSql, [projectId, new Date()])).map((r) => r.node_id)
    : undefined
  return { deleted: root.id, orphanedChildren: rows.filter((r) => r.depth === 1).map((r) => r.id), ...(unblocked ? { unblocked } : {}) }
}

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(req) {
    const b = (await req.json()) as Body
    if (b.op === ('project' as string)) {
      await db.query(`insert into users (id, name) values ('floor', 'floor') on conflict do nothing`)
      await db.query(`insert into projects (id, name, owner_id) values ($1, $1, 'floor') on conflict do nothing`, [b.projectId])
      return Response.json({ ok: true })
    }
    try {
      return Response.json(await write(b))
    } catch (err) {
      return new Response(`floor: ${(err as Error).message}`, { status: 500 })
    }
  },
})
console.log(`listening http://127.0.0.1:${server.port}`)
process.on('SIGTERM', async () => {
  server.stop(true)
  await db.close()
  process.exit(0)
})
