import { api, describe, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { ago, closeColumn, el, keepingFocus } from './dom.ts'

/**
 * Recent activity from the events feed (GET /events, read forward with its cursor): who or what
 * changed which node or iteration, and when. Read when the panel opens and after each change.
 * Its × or Escape closes it (on a phone it covers the page: without them it could not be left).
 */
interface Event {
  event: string
  timestamp: string
  node?: { id: string; type: string; data: { label?: string } }
  iteration?: { name: string; previous_name?: string }
  /** a proposal's (live.md §5) */
  title?: string
  agent?: string
  /** node.claimed and node.released name the node by id */
  nodeId?: string
  /** who made the write (history.md, 4); an older form was a plain name */
  actor?: string | { userName?: string | null; agent?: string; via?: string }
  /** a revert's events (history.md, Revert): said as "reverted", not as the delete or change it made */
  revert?: boolean
  /** an older form of node.claimed and node.released carried the agent here */
  payload?: { agent?: string }
}

const VERBS: Record<string, string> = {
  'node.added': 'added',
  'node.updated': 'changed',
  'node.deleted': 'deleted',
  'node.claimed': 'claimed',
  'node.released': 'released',
  'iteration.added': 'added iteration',
  'iteration.updated': 'changed iteration',
  'iteration.deleted': 'deleted iteration',
  'proposal.created': 'proposed',
  'proposal.applied': 'applied the proposal',
  'proposal.rejected': 'rejected the proposal',
  'proposal.withdrawn': 'withdrew the proposal',
}

/** what a revert did to the node, in words */
const REVERTED: Record<string, string> = {
  'node.added': 'reverted, bringing back',
  'node.updated': 'reverted a change of',
  'node.deleted': 'reverted, removing',
}

export class Activity {
  private cursor: string | null = null
  private events: Event[] = []
  private error = ''
  open = false

  constructor(
    private readonly ui: Ui,
    private readonly box: HTMLElement,
    private readonly close: () => void,
  ) {
    box.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return
      e.preventDefault()
      this.close()
    })
  }

  /** Read what is new (every page up to now), keep the last 100, and draw. */
  async refresh() {
    if (!this.open) return
    try {
      for (let i = 0; i < 50; i++) {
        const res = await api<{ events: Event[]; nextCursor: string | null; hasMore: boolean }>(
          'GET',
          `/events?projectId=${q(this.ui.projectId)}&limit=500${this.cursor ? `&after=${q(this.cursor)}` : ''}`,
        )
        this.events = [...this.events, ...res.events].slice(-100)
        if (res.nextCursor) this.cursor = res.nextCursor
        if (!res.hasMore) break
      }
      this.error = ''
    } catch (err) {
      this.error = describe(err)
    }
    this.draw()
  }

  draw() {
    const rows = [...this.events].reverse()
    // drawn again after every change of the plan: the focus stays on its button
    keepingFocus(this.box, () =>
      this.box.replaceChildren(
        el(
          'div',
          {},
          closeColumn('activity-close', 'activity', () => this.close()),
          el('h2', { text: 'Activity' }),
          this.error ? el('p', { class: 'field-error', role: 'alert', text: this.error }) : null,
          rows.length ? null : el('p', { class: 'empty', text: 'Nothing has happened in the last 7 days.' }),
        ),
        el(
          'ol',
          { class: 'feed' },
          rows.map((e) => {
            const who =
              e.agent ?? actorName(e.actor) ?? (e.event === 'node.claimed' || e.event === 'node.released' ? e.payload?.agent : undefined)
            const id = e.node?.id ?? e.nodeId
            const what = e.node
              ? (e.node.data?.label ?? e.node.id)
              : id
                ? (this.ui.plan.nodes.get(id)?.data.label ?? id)
                : (e.iteration?.name ?? e.title ?? '')
            const known = !!id && this.ui.plan.nodes.has(id)
            return el(
              'li',
              {},
              el('time', { datetime: e.timestamp, text: ago(e.timestamp) }),
              el('span', { class: 'who', text: who ? `${who} ` : '' }),
              el('span', { text: `${e.revert ? (REVERTED[e.event] ?? 'reverted') : (VERBS[e.event] ?? e.event)} ` }),
              known
                ? el('button', { type: 'button', class: 'link', text: what, onclick: () => this.ui.select(id!) })
                : el('q', { text: what }),
            )
          }),
        ),
      ),
    )
  }
}

/** A person's name, or the agent's name with the person's: "claude-code (ana)". */
function actorName(actor: Event['actor']): string | undefined {
  if (!actor || typeof actor === 'string') return actor
  if (actor.agent) return actor.userName ? `${actor.agent} (${actor.userName})` : actor.agent
  return actor.userName ?? undefined
}
