import type { Deps } from '../deps'
import { emit } from '../events/outbox'
import { toNode } from './model'
import { claimUnclassified, setClassified } from './queries'
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
      for (const row of rows) {
        if (row.data.kind) {
          await setClassified(tx, row.project_id, row.id, row.data) // set by hand meanwhile
          continue
        }
        const saved = await setClassified(tx, row.project_id, row.id, withClassification(row.data))
        await emit(tx, row.project_id, [{ type: 'node.updated', node: toNode(saved!) }], now)
      }
      return rows.length
    })
    done += n
    if (n > 0) deps.wake('events') // the node.updated events are committed: deliver them now
    if (n < BATCH) return done
  }
}
