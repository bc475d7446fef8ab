import { api, describe, mutate, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { closeButton, closeColumn, conflictList, el, focusFirst, keepingFocus, plural, revertButton } from './dom.ts'

/**
 * Review changes (history.md, 5): every change, by people and agents, since a time the person
 * picks (the last hour, today, 7 days (the default), since their last visit, or a time of their
 * own), narrowed to one person or agent if they like, grouped by who and request. Each group's
 * Revert shows the dry run first, then the conflicts in words, and only then takes the changes back.
 * By keyboard: opening Review gives the focus to the first group's Revert…, its dry run to the
 * confirmation; Cancel or Escape puts the dry run down (the focus back on its Revert…), and Escape
 * again closes Review. A redraw (a filter changed, a revert done) keeps the focus where it was.
 */
interface Change {
  changeId: string
  at: string
  actor: { userName: string | null; agent?: string }
  requestId: string
  action: string
  target: { kind: string; id: string }
  before: { data?: { label?: string }; name?: string } | null
  after: { data?: { label?: string }; name?: string } | null
  fields: string[]
  /** the change a revert change undid (history.md §2) */
  revertOf?: string
  /** the proposal this change applied (live.md §5): its author is the agent to review */
  proposal?: { proposalId: string; actor: { userName: string | null; agent?: string } }
}
interface Conflict {
  changeId: string
  target: { id: string }
  field?: string
  reason: 'changed_later' | 'gone' | 'has_children'
}
interface Group {
  /** who, in words: "claude-code (ana)" for an agent, "ana" for a person */
  agent: string
  user: string
  requestId: string
  changes: Change[]
  /** every one of its changes was undone by a later revert (listed in the same time) */
  takenBack?: boolean
}

const REASONS: Record<Conflict['reason'], (c: Conflict) => string> = {
  changed_later: (c) => `${c.target.id}${c.field ? `'s ${c.field}` : ''} was changed again later by someone else`,
  gone: (c) => `${c.target.id} no longer exists`,
  has_children: (c) => `${c.target.id} has items added under it later`,
}

const labelOf = (c: { target: { id: string }; before: Change['before']; after: Change['after'] }) =>
  c.after?.data?.label ?? c.before?.data?.label ?? c.after?.name ?? c.before?.name ?? c.target.id

const line = (c: { action: string; target: { id: string }; before: Change['before']; after: Change['after'] }) =>
  `${c.action === 'revert' ? (c.after ? (c.before ? 'set back' : 'bring back') : 'remove') : c.action} “${labelOf(c)}”`

type Since = 'visit' | 'hour' | 'today' | 'week' | 'custom'
const SINCE: [Since, string][] = [
  ['hour', 'The last hour'],
  ['today', 'Today'],
  ['week', 'The last 7 days'],
  ['visit', 'Since my last visit'],
  ['custom', 'Since a time…'],
]
const whoOf = (a: Change['actor']) => (a.agent ? `${a.agent}${a.userName ? ` (${a.userName})` : ''}` : (a.userName ?? 'Arbor'))

const toLocal = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)

export class Review {
  open = false
  private since: Date
  private sinceChoice: Since = 'week'
  /** the previous visit to this project, in this browser (none: the first) */
  private readonly lastVisit: Date | null
  /** one person or agent (whoOf), or everyone ('') */
  private who = ''
  private everyone: string[] = []
  private groups: Group[] = []
  private error = ''
  /** the group whose Revert was asked for: its dry run, then a confirmation */
  private pending: { group: Group; changes: Parameters<typeof line>[0][]; conflicts: Conflict[] } | null = null

  constructor(
    private readonly ui: Ui,
    private readonly box: HTMLElement,
    private readonly reload: () => Promise<void>,
    private readonly close: () => void,
  ) {
    box.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return
      e.preventDefault()
      if (this.pending) this.putDown(this.pending.group.requestId)
      else this.close()
    })
    // the last visit is one choice among others (by default the last 7 days); this visit is the next one's mark
    const key = `arbor.lastVisit.${ui.projectId}`
    const last = Number(localStorage.getItem(key))
    this.lastVisit = last ? new Date(last) : null
    this.since = this.sinceOf('week')
    localStorage.setItem(key, String(Date.now()))
  }

  /** Where the keyboard starts in Review: the first group's Revert…, or its × when there is none. */
  focusStart() {
    focusFirst(this.box, '.review-revert', '#review-close')
  }

  /** The dry run put down: the list as it was, the focus back on the group's Revert…. */
  private putDown(requestId: string) {
    this.pending = null
    this.draw()
    focusFirst(this.box, `${this.entry(requestId)} .review-revert`, '#review-close')
  }

  private entry = (requestId: string) => `[data-request="${CSS.escape(requestId)}"]`

  private sinceOf(choice: Since): Date {
    const now = Date.now()
    if (choice === 'hour') return new Date(now - 3_600_000)
    if (choice === 'today') return new Date(new Date().setHours(0, 0, 0, 0))
    if (choice === 'visit') return this.lastVisit ?? new Date(now - 7 * 86_400_000)
    if (choice === 'custom') return this.since
    return new Date(now - 7 * 86_400_000)
  }

  async refresh() {
    if (!this.open) return
    try {
      const changes: Change[] = []
      let after = ''
      for (let page = 0; page < 5; page++) {
        const res = await api<{ changes: Change[]; next?: string }>(
          'GET',
          `/history?projectId=${q(this.ui.projectId)}&since=${q(this.since.toISOString())}&limit=200${after ? `&after=${q(after)}` : ''}`,
        )
        changes.push(...res.changes)
        if (!res.next) break
        after = res.next
      }
      const groups = new Map<string, Group>()
      this.everyone = [...new Set(changes.map((c) => whoOf(c.actor)))].sort()
      for (const c of changes) {
        const who = whoOf(c.actor)
        if (this.who && who !== this.who) continue
        // a proposal applied by a person is the proposing agent's change too
        const label = c.proposal
          ? `proposal by ${c.proposal.actor.agent ?? c.proposal.actor.userName ?? 'someone'}${c.actor.userName ? ` (${c.actor.userName})` : ''}`
          : who
        const g = groups.get(c.requestId) ?? { agent: label, user: '', requestId: c.requestId, changes: [] }
        g.changes.push(c)
        groups.set(c.requestId, g)
      }
      // a group already taken back says so (its Revert… stays: its dry run says what is left to do)
      const undone = new Set(changes.map((c) => c.revertOf).filter(Boolean))
      for (const g of groups.values()) g.takenBack = g.changes.every((c) => undone.has(c.changeId))
      this.groups = [...groups.values()].sort((a, b) => a.agent.localeCompare(b.agent) || b.changes[0]!.at.localeCompare(a.changes[0]!.at))
      this.error = ''
    } catch (err) {
      this.error = describe(err)
    }
    this.draw()
  }

  private async dryRun(group: Group) {
    try {
      const res = await mutate<{ changes: Parameters<typeof line>[0][]; conflicts: Conflict[] }>({
        action: 'revert',
        projectId: this.ui.projectId,
        changeIds: group.changes.map((c) => c.changeId),
        dryRun: true,
      })
      this.pending = { group, changes: res.changes, conflicts: res.conflicts }
      this.error = ''
    } catch (err) {
      this.error = describe(err)
    }
    this.draw()
    // what the dry run found is above the confirmation: a screen reader reads it on the way back up
    if (this.pending?.group === group) focusFirst(this.box, `${this.entry(group.requestId)} .review-confirm`)
  }

  private async revert(group: Group, force: boolean) {
    // this page's own change: the stream's word of it, even before the answer, marks nothing as changed elsewhere
    for (const c of group.changes) if (c.target.kind === 'node') this.ui.mine.set(c.target.id, Date.now())
    try {
      await mutate({ action: 'revert', projectId: this.ui.projectId, changeIds: group.changes.map((c) => c.changeId), force })
      this.pending = null
      await this.reload()
      // drawn here: the stream's word of this revert may come later, and its refresh, finding the
      // plan already read again, would draw nothing (the reverted nodes left shown)
      this.ui.render()
      await this.refresh()
      this.ui.say(`Took back ${plural(group.changes.length, 'change')} by ${group.agent}.`)
      // the confirmation is gone: the focus on the group's Revert… again (its changes stay listed)
      if (!this.box.contains(document.activeElement) || document.activeElement === this.box)
        focusFirst(this.box, `${this.entry(group.requestId)} .review-revert`, '.review-revert', '#review-close')
    } catch (err) {
      this.error = describe(err)
      this.draw()
    }
  }

  draw() {
    const p = this.pending
    keepingFocus(this.box, () =>
      this.box.replaceChildren(
        el(
          'div',
          {},
          closeColumn('review-close', 'review', () => this.close()),
          el('h2', { text: 'Review changes' }),
          el(
            'div',
            { class: 'review-filters' },
            el(
              'label',
              {},
              'When ',
              el(
                'select',
                {
                  id: 'review-when',
                  onchange: (e: Event) => {
                    this.sinceChoice = (e.target as HTMLSelectElement).value as Since
                    this.since = this.sinceOf(this.sinceChoice)
                    void this.refresh()
                  },
                },
                SINCE.map(([v, text]) =>
                  el('option', {
                    value: v,
                    text: v === 'visit' && this.lastVisit ? `${text} (${this.lastVisit.toLocaleString()})` : text,
                    selected: v === this.sinceChoice,
                  }),
                ),
              ),
            ),
            this.sinceChoice === 'custom'
              ? el(
                  'label',
                  {},
                  'From ',
                  el('input', {
                    type: 'datetime-local',
                    id: 'review-since',
                    value: toLocal(this.since),
                    onchange: (e: Event) => {
                      const v = (e.target as HTMLInputElement).value
                      if (!v) return
                      this.since = new Date(v)
                      void this.refresh()
                    },
                  }),
                )
              : null,
            el(
              'label',
              {},
              'Who ',
              el(
                'select',
                {
                  id: 'review-who',
                  onchange: (e: Event) => {
                    this.who = (e.target as HTMLSelectElement).value
                    void this.refresh()
                  },
                },
                el('option', { value: '', text: 'Everyone', selected: !this.who }),
                [...new Set([...this.everyone, ...(this.who ? [this.who] : [])])].map((w) =>
                  el('option', { value: w, text: w, selected: w === this.who }),
                ),
              ),
            ),
          ),
          this.error ? el('p', { class: 'field-error', role: 'alert', text: this.error }) : null,
          this.groups.length
            ? null
            : el('p', {
                class: 'empty',
                text: `No change ${this.who ? `by ${this.who} ` : ''}since ${this.since.toLocaleString()}.`,
              }),
          el(
            'ol',
            { class: 'feed review-groups' },
            this.groups.map((g) =>
              el(
                'li',
                { 'data-request': g.requestId },
                el('time', { datetime: g.changes[0]!.at, text: new Date(g.changes[0]!.at).toLocaleString() }),
                el('strong', { text: `${g.agent}: ${plural(g.changes.length, 'change')}` }),
                g.takenBack ? el('span', { class: 'chip taken-back', text: 'taken back' }) : null,
                el(
                  'ul',
                  {},
                  g.changes.slice(0, 8).map((c) => el('li', { text: line(c) })),
                ),
                g.changes.length > 8 ? el('p', { class: 'empty', text: `… and ${g.changes.length - 8} more` }) : null,
                p?.group === g
                  ? el(
                      'div',
                      { class: 'review-plan', role: 'region', 'aria-label': 'What the revert would do' },
                      el('p', { text: `Taking these back would make ${plural(p.changes.length, 'change')}:` }),
                      el(
                        'ul',
                        {},
                        p.changes.slice(0, 8).map((c) => el('li', { text: line(c) })),
                      ),
                      conflictList(
                        'Someone changed things since:',
                        p.conflicts.map((c) => REASONS[c.reason](c)),
                      ),
                      revertButton('review-confirm', p.conflicts.length > 0, () => void this.revert(g, p.conflicts.length > 0)),
                      closeButton('Cancel', () => this.putDown(g.requestId)),
                    )
                  : el('button', {
                      type: 'button',
                      class: 'review-revert',
                      text: 'Revert…',
                      'aria-label': `Revert… ${plural(g.changes.length, 'change')} by ${g.agent}${g.takenBack ? ' (taken back already)' : ''}`,
                      onclick: () => void this.dryRun(g),
                    }),
              ),
            ),
          ),
        ),
      ),
    )
  }
}
