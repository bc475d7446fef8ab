import type { Activity } from './activity.ts'
import { api, Offline, q, Refused, Unauthorized } from './api.ts'
import type { Ui } from './ctx.ts'
import type { Command } from './model.ts'

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
      const unknownTarget = res.commands.some((c) => c.nodeId && !ui.plan.nodes.has(c.nodeId))
      const treeChanged = res.revision !== live.revision
      live.revision = res.revision
      let pruned = false
      if (treeChanged || unknownTarget) {
        const before = new Map([...ui.plan.nodes].map(([id, n]) => [id, JSON.stringify([n.parentId, n.data, n.claim])]))
        await d.loadPlan()
        markOthers(ui, before)
        pruned = ui.view.prune()
        if (treeChanged) void d.activity.refresh()
      }
      for (const c of res.commands) ui.view.apply(c)
      const last = res.commands.at(-1)
      if (last) live.applied = last.id
      if (treeChanged || unknownTarget || last) ui.render()
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

/** Nodes added or changed since `before` that this page did not write: marked for a few seconds. */
function markOthers(ui: Ui, before: Map<string, string>) {
  const now = Date.now()
  let any = false
  for (const [id, n] of ui.plan.nodes) {
    if (before.get(id) === JSON.stringify([n.parentId, n.data, n.claim])) continue
    if (now - (ui.mine.get(id) ?? 0) < 10_000) continue
    ui.marks.set(id, now + MARK_MS)
    any = true
  }
  if (any) setTimeout(() => ui.render(), MARK_MS + 50)
}
