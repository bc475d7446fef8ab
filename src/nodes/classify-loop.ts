import type { Deps } from '../deps'
import { type Outbox, outboxOf, save } from '../events/outbox'
import { nodeChange, nodeState } from '../history/record'
import { toNode } from './model'
import { claimUnclassified, setClassifiedMany } from './queries'
import { withClassification } from './service'

const BATCH = 100

/**
 * Classify tasks added without a kind. Pending work is a column in the database
 * (classified_at is null), so a task added just before a crash is classified after the
 * restart; replicas share the work with skip locked. Woken after every write, and
 * swept every few seconds as a safety net.
 */
export async function tick(deps: Deps, now: Date): Promise<number> {
  let done = 0
  for (;;) {
    const n = await deps.db.tx(async (tx) => {
      const rows = await claimUnclassified(tx, BATCH)
      if (rows.length === 0) return 0
      // a kind set by hand meanwhile is kept (and no event: nothing changed)
      const saved = await setClassifiedMany(
        tx,
        rows.map((r) => ({ project_id: r.project_id, id: r.id, data: r.data.kind ? r.data : withClassification(r.data) })),
      )
      const order = new Map(rows.map((r, i) => [`${r.project_id}/${r.id}`, i]))
      const byHand = new Set(rows.filter((r) => r.data.kind).map((r) => `${r.project_id}/${r.id}`))
      // each project's events and changes, saved as a write of POST /mutate saves them (`save`)
      const outboxes = new Map<string, Outbox>()
      const was = new Map(rows.map((r) => [`${r.project_id}/${r.id}`, r.data]))
      // events in the order the tasks were added, as one by one would have written them
      saved.sort((a, b) => order.get(`${a.project_id}/${a.id}`)! - order.get(`${b.project_id}/${b.id}`)!)
      for (const row of saved) {
        if (byHand.has(`${row.project_id}/${row.id}`)) continue
        let outbox = outboxes.get(row.project_id)
        if (!outbox) outboxes.set(row.project_id, (outbox = outboxOf(row.project_id)))
        const node = toNode(row)
        outbox.events.push({ type: 'node.updated', node })
        // recorded as Arbor's own change (no author): history is whole, and a revert does not count it as a conflict
        const data = was.get(`${row.project_id}/${row.id}`)!
        outbox.changes.push(nodeChange('update', node, nodeState({ parentId: node.parentId, data }), nodeState(node)))
      }
      for (const outbox of outboxes.values()) await save({ ...deps, db: tx, now: () => now }, outbox)
      return rows.length
    })
    done += n
    if (n > 0) deps.wake('events') // the node.updated events are committed: deliver them now
    if (n < BATCH) return done
  }
}
