import { api, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { el } from './dom.ts'
import type { PresenceActor, PresenceEntry } from './model.ts'

/**
 * Who is where on this plan (live.md, 3 and 4): the page's own presence, posted while it is
 * visible (the selected node, and the field whose editor is open: an edit intent), and the
 * others', read once and then kept from the stream's `event: presence` messages.
 */
/** the page's own presence: posted again this often while visible (it holds 30 s) */
const REPOST_MS = 15_000

const keyOf = (a: PresenceActor) => `${a.userId}\n${a.agent ?? ''}\n${a.via}`

export class Presence {
  /** others', by actor (claims by agent and node) */
  private readonly others = new Map<string, PresenceEntry>()
  private self: string | null = null
  private posted = ''
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private begun = false

  constructor(
    private readonly ui: Ui,
    /** what changed on screen: the rows and the panel of these nodes */
    private readonly redraw: (ids: Set<string>) => void,
  ) {}

  /** Read who is here now, and post this page's presence. */
  async start() {
    if (this.begun) return this.sync(true)
    this.begun = true
    document.addEventListener('visibilitychange', () => void this.sync(true))
    window.addEventListener('pagehide', () => this.leave())
    await this.sync(true)
    await this.reload()
  }

  stop() {
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** GET /presence: the list as the server has it (after a reconnect, a message may have been missed). */
  async reload() {
    const { presence } = await api<{ presence: PresenceEntry[] }>('GET', `/presence?projectId=${q(this.ui.projectId)}`)
    const touched = new Set([...this.others.values()].map((p) => p.nodeId ?? ''))
    this.others.clear()
    for (const p of presence) if (!this.mine(p)) this.others.set(this.key(p), p)
    for (const p of presence) touched.add(p.nodeId ?? '')
    touched.delete('')
    this.redraw(touched)
  }

  /** A stream message: someone came, moved or left. */
  heard(m: PresenceEntry & { state: 'here' | 'gone' }) {
    if (this.mine(m)) return
    const k = this.key(m)
    const before = this.others.get(k)
    if (m.state === 'gone') this.others.delete(k)
    else this.others.set(k, { actor: m.actor, nodeId: m.nodeId, field: m.field, note: m.note, claim: m.claim })
    this.redraw(new Set([before?.nodeId, m.nodeId].filter((x): x is string => !!x)))
  }

  /** The others on a node (the page's own person is not listed). */
  on(nodeId: string): PresenceEntry[] {
    return [...this.others.values()].filter((p) => p.nodeId === nodeId)
  }

  /** Who else is editing this field of this node, if anyone. */
  editing(nodeId: string, field: string): PresenceEntry | undefined {
    return [...this.others.values()].find((p) => p.nodeId === nodeId && p.field === field)
  }

  /**
   * Post where this page is, when that changed or is due: the selected node, and the field whose
   * editor has the focus. A hidden page ends its presence.
   */
  async sync(now = false) {
    if (this.stopped) return
    if (document.visibilityState === 'hidden') {
      clearTimeout(this.timer)
      if (this.posted !== 'gone') {
        this.posted = 'gone'
        await api('DELETE', `/presence?projectId=${q(this.ui.projectId)}`).catch(() => {})
      }
      return
    }
    const ui = this.ui
    const active = document.activeElement as HTMLInputElement | null
    // the details panel's field controls: id f-<name> (f-parent: parentId), name the field
    const inPanel = active?.closest?.('#panel') && active.id?.startsWith('f-') && active.name ? active.name : undefined
    const nodeId = ui.edit?.id ?? ui.view.selected ?? undefined
    const field = ui.edit?.id ? 'label' : nodeId && inPanel ? inPanel : undefined
    const place = JSON.stringify([nodeId ?? null, field ?? null])
    // nothing moved: the timer set at the last post renews it (a redraw never puts it off)
    if (!now && place === this.posted) return
    clearTimeout(this.timer)
    this.posted = place
    try {
      const res = await api<{ presence: PresenceEntry }>('POST', '/presence', {
        projectId: ui.projectId,
        ...(nodeId && ui.plan.nodes.has(nodeId) ? { nodeId } : {}),
        ...(field && nodeId && ui.plan.nodes.has(nodeId) ? { field } : {}),
      })
      this.self = keyOf(res.presence.actor)
    } catch {
      // said again with the timer below, not at every redraw
    }
    this.timer = setTimeout(() => void this.sync(true), REPOST_MS)
  }

  private leave() {
    // the page goes: end its presence at once (keepalive lets the request outlive the page)
    this.posted = 'gone'
    void api('DELETE', `/presence?projectId=${q(this.ui.projectId)}`, undefined, {}, true).catch(() => {})
  }

  private mine(p: PresenceEntry) {
    return this.self !== null && keyOf(p.actor) === this.self && !p.claim
  }

  private key(p: PresenceEntry) {
    return p.claim ? `claim\n${p.actor.agent}\n${p.nodeId}` : keyOf(p.actor)
  }
}

/** Initials of a person's name: “Ada Lovelace” → AL. */
export const initials = (name: string) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => w[0]!.toUpperCase())
    .join('') || '?'

const who = (p: PresenceEntry) => (p.actor.agent ? `${p.actor.agent} (agent of ${p.actor.userName})` : p.actor.userName)

/** The row's marks: a person's initials, an agent's mark and name; one per actor. */
export function presenceChips(list: PresenceEntry[]): HTMLElement | null {
  if (!list.length) return null
  const seen = new Set<string>()
  const marks: HTMLElement[] = []
  for (const p of list) {
    const k = p.actor.agent ? `a:${p.actor.agent}` : `u:${p.actor.userId}`
    if (seen.has(k)) continue
    seen.add(k)
    const title = `${who(p)}${p.field ? ` is editing ${p.field}` : p.claim ? ' holds the claim' : ' is here'}${p.note ? `: ${p.note}` : ''}`
    marks.push(
      p.actor.agent
        ? el(
            'span',
            { class: `who agent${p.field ? ' editing' : ''}`, title },
            el('span', { class: 'mark', 'aria-hidden': 'true', text: '◆' }),
            // its own box, so a long agent name is cut with "…" (the title has it whole)
            el('span', { class: 'name', text: p.actor.agent }),
          )
        : el('span', { class: `who person${p.field ? ' editing' : ''}`, title, text: initials(p.actor.userName) }),
    )
  }
  return el('span', { class: 'presence', 'aria-label': `Here: ${list.map(who).join(', ')}` }, marks)
}

/** The details panel's lines: who is on this node, and who edits which field. */
export function presenceLines(list: PresenceEntry[], fieldLabel: (name: string) => string): HTMLElement | null {
  if (!list.length) return null
  return el(
    'ul',
    { class: 'presence-list', 'aria-label': 'Who is here' },
    list.map((p) =>
      el(
        'li',
        {},
        presenceChips([p]),
        ` ${who(p)} ${p.field ? `is editing ${fieldLabel(p.field)}` : p.claim ? 'holds the claim on it' : 'is looking at it'}${p.note ? ` — ${p.note}` : ''}`,
      ),
    ),
  )
}
