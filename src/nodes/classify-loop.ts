import type { Deps } from '../deps'
import { type DomainEvent, emit } from '../events/outbox'
import type { ChangeDraft } from '../history/model'
import { nodeChange, nodeState, recordChanges } from '../history/record'
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
      const events = new Map<string, DomainEvent[]>()
      const changes = new Map<string, ChangeDraft[]>()
      const was = new Map(rows.map((r) => [`${r.project_id}/${r.id}`, r.data]))
      // events in the order the tasks were added, as one by one would have written them
      saved.sort((a, b) => order.get(`${a.project_id}/${a.id}`)! - order.get(`${b.project_id}/${b.id}`)!)
      for (const row of saved) {
        if (byHand.has(`${row.project_id}/${row.id}`)) continue
        const list = events.get(row.project_id) ?? []
        const node = toNode(row)
        list.push({ type: 'node.updated', node })
        events.set(row.project_id, list)
        // recorded as Arbor's own change (no author): history is whole, and a revert does not count it as a conflict
        const data = was.get(`${row.project_id}/${row.id}`)!
        changes.set(row.project_id, [
          ...(changes.get(row.project_id) ?? []),
          nodeChange('update', node, nodeState({ parentId: node.parentId, data }), nodeState(node)),
        ])
      }
      for (const [projectId, list] of changes) await recordChanges({ ...deps, db: tx }, projectId, list)
      for (const [projectId, list] of events) await emit(tx, projectId, list, now, deps.commits)
      return rows.length
    })
    done += n
    if (n > 0) deps.wake('events') // the node.updated events are committed: deliver them now
    if (n < BATCH) return done
  }
}
