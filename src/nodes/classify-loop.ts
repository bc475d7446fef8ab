import type { Deps } from '../deps'
import { type Outbox, outboxOf, save } from '../events/outbox'
import { nodeChange, nodeState } from '../history/change'
import { type NodeData, toNode } from './model'
import { claimUnclassified, setClassifiedMany, tryLockWork } from './queries'
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
      // a kind set by hand meanwhile is kept (and no event: nothing changed)
      const claimed = (await claimUnclassified(tx, BATCH)).map((r) => ({ ...r, next: r.data.kind ? r.data : withClassification(r.data) }))
      if (claimed.length === 0) return 0
      const rows = await withWorkLock(tx, claimed)
      if (rows.length === 0) return 0
      const saved = await setClassifiedMany(
        tx,
        rows.map((r) => ({ project_id: r.project_id, id: r.id, data: r.next })),
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
    // the node.updated events are committed: deliver them now. A write of Arbor's own, outside the sequence of the
    // API's writes (src/mutate/sequence.ts `runWrite`, whose commit wakes the classifier too): this loop is the classifier
    if (n > 0) deps.wake('events')
    if (n < BATCH) return done
  }
}

type Claimed = Awaited<ReturnType<typeof claimUnclassified>>[number] & { next: NodeData }

/**
 * The claimed tasks this round classifies (`next`: each one's data with its kind): on PostgreSQL,
 * a task made a do-it only when the round holds its project's work lock, taken now, without
 * waiting. The work state's update trigger takes that lock for a task made a do-it or no longer
 * one (sql/migrations/0055), after the row the claim locked: a loop that waited for it there held
 * the task while a write that holds the lock and needs the task waited for it, a deadlock
 * (test/process.deadlock-retry.test.ts). Trying the lock waits for nothing; a project whose lock
 * another write holds keeps its do-it tasks unclassified until a later round (the loop is woken
 * after each write and swept every 2 s). A memo asks the work state nothing, nor does a task whose
 * kind was set by hand meanwhile (its data does not change): no lock. A task's add is followed by
 * its classification, most of them memos: they cost no statement more. On PGlite, one transaction
 * at a time: every claimed task.
 */
async function withWorkLock(tx: Deps['db'], claimed: Claimed[]): Promise<Claimed[]> {
  if (tx.kind !== 'postgres') return claimed
  const work = (r: Claimed) => !r.data.kind && r.next.kind === 'do-it'
  const projects = [...new Set(claimed.filter(work).map((r) => r.project_id))]
  if (projects.length === 0) return claimed
  const locked = new Set(await tryLockWork(tx, projects))
  return claimed.filter((r) => !work(r) || locked.has(r.project_id))
}
