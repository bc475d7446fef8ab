import type { Activity } from './activity.ts'
import { api, Offline, q, Refused, readStream, Unauthorized } from './api.ts'
import type { Ui } from './ctx.ts'
import type { Command } from './model.ts'
import type { Presence } from './presence.ts'

interface LiveState {
  revision: string | undefined
  applied: number
  session: number
}

interface Deps {
  ui: Ui
  live: LiveState
  session: number
  loadPlan: () => Promise<void>
  setLive: (state: 'live' | 'off' | 'retry', text: string) => void
  report: (last: { id: number; type: string } | null) => Promise<unknown>
  activity: Activity
  signIn: (message: string) => void
  /** redraw only these nodes (their data changed) */
  patch: (ids: Set<string>) => void
}

/** How long a change by someone else stays marked. */
const MARK_MS = 5000

/**
 * One long poll at a time: it answers with the commands queued after `applied`, or when the tree
 * changed after `revision`, or after 8 s with nothing. Each call is also the page's heartbeat.
 * It stops when a newer start (another key) took over.
 */
export async function startLive(d: Deps) {
  const { ui, live } = d
  while (live.session === d.session) {
    try {
      const res = await api<{ commands: (Command & { id: number })[]; revision: string }>(
        'GET',
        `/view/commands?projectId=${q(ui.projectId)}&after=${live.applied}&wait=8000&revision=${q(live.revision ?? '')}`,
      )
      if (live.session !== d.session) return
      d.setLive('live', 'Live')
      // a command naming a node the page has not loaded was sent after the write that made it
      // answered: the plan is loaded again (the revision may not have said so on another replica)
      const unknownTarget = res.commands.some((c) => [c.nodeId ?? [], c.goalIds ?? []].flat().some((id) => !ui.plan.nodes.has(id)))
      const treeChanged = res.revision !== live.revision
      live.revision = res.revision
      let pruned = false
      let patch: Set<string> | null = null
      if (treeChanged || unknownTarget) ({ patch, pruned } = await reloadPlan(d, treeChanged))
      for (const c of res.commands) ui.view.apply(c)
      const last = res.commands.at(-1)
      if (last) live.applied = last.id
      if (patch && !last && !unknownTarget) d.patch(patch)
      else if (treeChanged || unknownTarget || last) ui.render()
      if (last || pruned) await d.report(last ? { id: last.id, type: last.type } : null)
    } catch (err) {
      if (live.session !== d.session) return
      if (err instanceof Unauthorized) return d.signIn('This API key is not valid any more (revoked or mistyped). Paste a current one.')
      if (err instanceof Refused && err.status === 403) return d.setLive('off', err.message)
      let wait = 2
      if (err instanceof Refused && err.status === 429) {
        wait = Math.max(2, err.retryAfter)
        d.setLive('retry', `Rate limited by the server: trying again in ${wait} s`)
      } else if (err instanceof Offline || !navigator.onLine) d.setLive('retry', 'Offline: reconnecting when the network is back…')
      else d.setLive('retry', `Reconnecting… (${(err as Error).message})`)
      await new Promise((r) => setTimeout(r, wait * 1000))
    }
  }
}

/** Load the plan again and mark what someone else changed; `patch`: the rows to redraw when only data changed. */
async function reloadPlan(d: Deps, treeChanged: boolean): Promise<{ patch: Set<string> | null; pruned: boolean }> {
  const { ui } = d
  const before = new Map([...ui.plan.nodes].map(([id, n]) => [id, JSON.stringify([n.parentId, n.data, n.claim])]))
  const parents = new Map([...ui.plan.nodes].map(([id, n]) => [id, n.parentId]))
  const iterations = JSON.stringify(ui.plan.iterations)
  await d.loadPlan()
  const changed = markOthers(ui, before, d.patch)
  // only data changed (no node added, removed or moved, same iterations): patch those rows
  const same =
    parents.size === ui.plan.nodes.size &&
    [...ui.plan.nodes].every(([id, n]) => parents.has(id) && parents.get(id) === n.parentId) &&
    iterations === JSON.stringify(ui.plan.iterations)
  const pruned = ui.view.prune()
  if (treeChanged) void d.activity.refresh()
  return { patch: same ? changed : null, pruned }
}

/**
 * The stream (live.md, 2): every event of the project as it commits, and presence. An event of
 * the tree or its iterations loads the plan again (one load at a time; events that come during
 * one load cause one more), this page's own writes and Review reverts included; a presence
 * message updates who is shown where. It reconnects with Last-Event-ID, so nothing is missed;
 * where the stream cannot be had, the long poll above keeps the page current.
 */
export async function startStream(d: Deps & { presence: Presence }) {
  const { ui, live } = d
  let cursor: string | undefined
  let loading: Promise<void> | null = null
  let again = false
  const refresh = () => {
    if (loading) {
      again = true
      return
    }
    loading = (async () => {
      do {
        again = false
        const { patch, pruned } = await reloadPlan(d, true)
        if (live.session !== d.session) return
        if (patch && !ui.edit) d.patch(patch)
        else ui.render()
        if (pruned) await d.report(null).catch(() => {})
      } while (again)
    })()
      .catch(() => {}) // the long poll says what is wrong with the connection
      .finally(() => {
        loading = null
      })
  }
  let first = true
  while (live.session === d.session) {
    const ctl = new AbortController()
    try {
      if (!first) await d.presence.reload() // messages may have been missed while away
      first = false
      await readStream(
        `/stream?projectId=${q(ui.projectId)}`,
        cursor,
        (m) => {
          if (live.session !== d.session) return ctl.abort()
          if (m.event === 'presence') return d.presence.heard(m.data as Parameters<Presence['heard']>[0])
          if (m.id) cursor = m.id
          if (m.event === 'reset' || m.event.startsWith('node.') || m.event.startsWith('iteration.')) refresh()
        },
        ctl.signal,
      )
      // the server ended it (a replica stopping): reconnect at once, from the cursor
    } catch (err) {
      if (live.session !== d.session || err instanceof Unauthorized) return
      if (err instanceof Refused && err.status === 403) return
      const wait = err instanceof Refused && err.status === 429 ? Math.max(2, err.retryAfter) : 2
      await new Promise((r) => setTimeout(r, wait * 1000))
    }
  }
}

/** Nodes added or changed since `before`; those this page did not write are marked for a few seconds. */
function markOthers(ui: Ui, before: Map<string, string>, redraw: (ids: Set<string>) => void): Set<string> {
  const now = Date.now()
  const changed = new Set<string>()
  const marked = new Set<string>()
  for (const [id, n] of ui.plan.nodes) {
    if (before.get(id) === JSON.stringify([n.parentId, n.data, n.claim])) continue
    changed.add(id)
    if (now - (ui.mine.get(id) ?? 0) < 10_000) continue
    ui.marks.set(id, now + MARK_MS)
    marked.add(id)
  }
  if (marked.size) setTimeout(() => redraw(marked), MARK_MS + 50) // the marks go
  return changed
}
