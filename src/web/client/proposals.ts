import { api, describe, mutate, q, Refused } from './api.ts'
import type { Ui } from './ctx.ts'
import { closeButton, closeColumn, conflictList, el, focusFirst, keepingFocus, plural } from './dom.ts'
import { TYPE_NAMES } from './model.ts'

/** A node type in the app's words (an approach is a bet), lower case as it reads in a sentence. */
const kind = (type: string | undefined) =>
  type && Object.hasOwn(TYPE_NAMES, type) ? TYPE_NAMES[type as keyof typeof TYPE_NAMES].toLowerCase() : (type ?? 'node')

/**
 * Proposals (live.md §5): what agents propose, for a person to apply or reject. The menu's
 * button shows how many are open; the panel lists them, each as a difference in the plan's own
 * words (what would be added under which parent, each field old → new, what would go), with the
 * conflicts since it was proposed in words, and Apply and Reject. By keyboard: opening the panel
 * gives the focus to the first proposal's Review…, reading one to its Apply; Close or Escape
 * puts a proposal down (the focus back on its Review…), and Escape again closes the panel.
 */
type State = { parentId?: string | null; data?: Record<string, unknown>; name?: string } | null
interface Change {
  target: { kind: string; id: string; type?: string }
  action: string
  before: State
  after: State
}
interface Conflict {
  target: { id: string }
  field: string
  yours: unknown
  theirs: unknown
  actor: { userName: string | null; agent?: string } | null
  at: string | null
}
interface Proposal {
  proposalId: string
  title: string
  note?: string
  status: string
  actor: { userName: string | null; agent?: string }
  createdAt: string
  preview: { changes: Change[] }
  conflicts?: Conflict[]
  problem?: { message: string }
}

const value = (v: unknown) => (v === null || v === undefined || v === '' ? 'nothing' : typeof v === 'string' ? `“${v}”` : JSON.stringify(v))
const who = (a: { userName: string | null; agent?: string } | null) =>
  a ? (a.agent ? `${a.agent} (${a.userName ?? '?'})` : (a.userName ?? 'someone')) : 'someone'

export class Proposals {
  open = false
  private list: Proposal[] = []
  private count = 0
  private error = ''
  /** the proposal read afresh (its preview now, and its conflicts) */
  private shown: Proposal | null = null

  constructor(
    private readonly ui: Ui,
    private readonly box: HTMLElement,
    private readonly button: HTMLElement,
    private readonly reload: () => Promise<void>,
    private readonly close: () => void,
  ) {
    box.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return
      e.preventDefault()
      if (this.shown) this.putDown(this.shown.proposalId)
      else this.close()
    })
  }

  /** Where the keyboard starts in the panel: the first proposal's Review…, or its × when none waits. */
  focusStart() {
    focusFirst(this.box, '.proposal-open', '#proposals-close')
  }

  /** The proposal being read closed: the list as it was, the focus back on its Review…. */
  private putDown(proposalId: string) {
    this.shown = null
    this.draw()
    focusFirst(this.box, `[data-proposal="${CSS.escape(proposalId)}"] .proposal-open`, '#proposals-close')
  }

  /** The open count on the menu's button: read on every change of the plan. */
  async refreshCount() {
    try {
      const res = await api<{ proposals: Proposal[]; _meta?: { open?: number } }>(
        'GET',
        `/proposals?projectId=${q(this.ui.projectId)}&status=open&limit=100`,
      )
      this.count = res._meta?.open ?? res.proposals.length
      this.list = res.proposals
    } catch {
      return // a key that cannot read proposals: the button keeps its word
    }
    this.button.textContent = `Proposals (${this.count})`
    this.button.setAttribute('aria-label', `Proposals: ${plural(this.count, 'open one')}`)
    if (this.open) this.draw()
  }

  async refresh() {
    if (!this.open) return
    await this.refreshCount()
    if (this.shown && !this.list.some((p) => p.proposalId === this.shown!.proposalId)) this.shown = null
    this.draw()
  }

  private async read(p: Proposal) {
    try {
      const res = await api<{ proposal: Proposal }>('GET', `/proposals/${q(p.proposalId)}?projectId=${q(this.ui.projectId)}`)
      this.shown = res.proposal
      this.error = ''
    } catch (err) {
      this.error = describe(err)
    }
    this.draw()
    this.box.querySelector<HTMLElement>(`[data-proposal="${p.proposalId}"] .proposal-apply`)?.focus()
  }

  private async decide(p: Proposal, action: 'applyProposal' | 'rejectProposal', force = false) {
    // applied here, its changes are this page's: not marked as changed elsewhere when the stream tells of them
    if (action === 'applyProposal')
      for (const c of (this.shown ?? p).preview.changes) if (c.target.kind === 'node') this.ui.mine.set(c.target.id, Date.now())
    try {
      await mutate({ action, projectId: this.ui.projectId, proposalId: p.proposalId, ...(force ? { force: true } : {}) })
      this.shown = null
      this.error = ''
      await this.reload()
      this.ui.render() // as Review's revert: the stream's later refresh would find nothing new to draw
      await this.refresh()
      this.ui.say(`${action === 'applyProposal' ? 'Applied' : 'Rejected'} “${p.title}”.`)
      // on to the next proposal waiting (the one decided is gone from the list), or the panel's ×
      this.focusStart()
    } catch (err) {
      // the plan changed since: read it again, so the conflicts show in words
      if (err instanceof Refused && err.code === 'stale_write') await this.read(p)
      this.error = describe(err)
      this.draw()
    }
  }

  /** A node's name in the plan's words: its type and label, from the plan or from the proposal itself. */
  private name(id: string | null | undefined, changes: Change[]): string {
    if (!id) return 'the top level'
    const n = this.ui.plan.nodes.get(id)
    if (n) return `${kind(n.type)} “${String(n.data.label ?? id)}”`
    const added = changes.find((c) => c.target.id === id && c.after)
    return added ? `${kind(added.target.type)} “${String(added.after?.data?.label ?? id)}”` : id
  }

  /** One change as a sentence (or a few: one per field). */
  private words(c: Change, all: Change[]): string[] {
    const label = String(c.after?.data?.label ?? c.before?.data?.label ?? c.after?.name ?? c.target.id)
    if (c.target.kind === 'iteration') return [`Add iteration “${label}”`]
    if (!c.before) return [`Add ${kind(c.target.type)} “${label}” under ${this.name(c.after?.parentId, all)}`]
    if (!c.after) return [`Remove ${kind(c.target.type)} “${label}”`]
    const out: string[] = []
    if ((c.before.parentId ?? null) !== (c.after.parentId ?? null))
      out.push(`Move “${label}” from under ${this.name(c.before.parentId, all)} to under ${this.name(c.after.parentId, all)}`)
    const keys = new Set([...Object.keys(c.before.data ?? {}), ...Object.keys(c.after.data ?? {})])
    for (const k of keys) {
      const a = c.before.data?.[k]
      const b = c.after.data?.[k]
      if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`“${String(c.before.data?.label ?? label)}”: ${k} ${value(a)} → ${value(b)}`)
    }
    return out
  }

  draw() {
    const s = this.shown
    // every load of the plan draws this again (a live change by anyone): the focus stays on its button
    keepingFocus(this.box, () =>
      this.box.replaceChildren(
        el(
          'div',
          {},
          closeColumn('proposals-close', 'proposals', () => this.close()),
          el('h2', { text: `Proposals: ${plural(this.count, 'open one')}` }),
          this.error ? el('p', { class: 'field-error', role: 'alert', text: this.error }) : null,
          this.list.length ? null : el('p', { class: 'empty', text: 'Nothing is waiting for a decision.' }),
          el(
            'ol',
            { class: 'feed proposal-list' },
            this.list.map((p) => {
              const open = s?.proposalId === p.proposalId ? s : null
              const changes = (open ?? p).preview.changes
              return el(
                'li',
                { 'data-proposal': p.proposalId },
                el('time', { datetime: p.createdAt, text: new Date(p.createdAt).toLocaleString() }),
                el('strong', { text: `${p.title}` }),
                el('p', { class: 'sub', text: `by ${who(p.actor)}: ${plural(changes.length, 'change')}${p.note ? ` · ${p.note}` : ''}` }),
                open
                  ? el(
                      'div',
                      { class: 'review-plan', role: 'region', 'aria-label': `What “${p.title}” would do` },
                      el(
                        'ul',
                        { class: 'proposal-diff' },
                        changes.flatMap((c) => this.words(c, changes)).map((t) => el('li', { text: t })),
                      ),
                      open.problem
                        ? el('p', { class: 'field-error', role: 'alert', text: `It cannot be applied now: ${open.problem.message}` })
                        : null,
                      conflictList(
                        'Changed since it was proposed:',
                        (open.conflicts ?? []).map(
                          (c) =>
                            `${this.name(c.target.id, changes)}: ${c.field} was changed by ${who(c.actor)}${c.at ? ` at ${new Date(c.at).toLocaleString()}` : ''} to ${value(c.theirs)}; this proposal sets ${value(c.yours)}`,
                        ),
                      ),
                      el('button', {
                        type: 'button',
                        class: open.conflicts?.length ? 'danger proposal-apply' : 'primary proposal-apply',
                        text: open.conflicts?.length ? 'Apply anyway (their changes are overwritten)' : 'Apply',
                        disabled: !!open.problem,
                        onclick: () => void this.decide(p, 'applyProposal', !!open.conflicts?.length),
                      }),
                      el('button', {
                        type: 'button',
                        class: 'proposal-reject',
                        text: 'Reject',
                        onclick: () => void this.decide(p, 'rejectProposal'),
                      }),
                      closeButton('Close', () => this.putDown(p.proposalId)),
                    )
                  : el('button', {
                      type: 'button',
                      class: 'proposal-open',
                      text: 'Review…',
                      'aria-label': `Review… “${p.title}”`,
                      onclick: () => void this.read(p),
                    }),
              )
            }),
          ),
        ),
      ),
    )
  }
}
