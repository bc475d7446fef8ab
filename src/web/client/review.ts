import { api, describe, mutate, q } from './api.ts'
import type { Ui } from './ctx.ts'
import { el, plural } from './dom.ts'

/**
 * Review changes (history.md, 5): the changes made with an agent since a time the person picks
 * (by default their last visit), grouped by agent and request. Each group's Revert shows the
 * dry run first, then the conflicts in words, and only then takes the changes back.
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
  agent: string
  user: string
  requestId: string
  changes: Change[]
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

const toLocal = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)

export class Review {
  open = false
  private since: Date
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
    // since the last visit to this project (else a day ago); this visit is the next one's mark
    const key = `arbor.lastVisit.${ui.projectId}`
    const last = Number(localStorage.getItem(key))
    this.since = last ? new Date(last) : new Date(Date.now() - 86_400_000)
    localStorage.setItem(key, String(Date.now()))
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
      for (const c of changes) {
        // a proposal applied by a person is the proposing agent's change too
        const proposer = c.proposal ? `proposal by ${c.proposal.actor.agent ?? c.proposal.actor.userName ?? 'someone'}` : undefined
        const agent = c.actor.agent ?? proposer
        if (!agent) continue
        const g = groups.get(c.requestId) ?? { agent, user: c.actor.userName ?? '', requestId: c.requestId, changes: [] }
        g.changes.push(c)
        groups.set(c.requestId, g)
      }
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
  }

  private async revert(group: Group, force: boolean) {
    try {
      await mutate({ action: 'revert', projectId: this.ui.projectId, changeIds: group.changes.map((c) => c.changeId), force })
      this.pending = null
      await this.reload()
      await this.refresh()
    } catch (err) {
      this.error = describe(err)
      this.draw()
    }
  }

  draw() {
    const p = this.pending
    this.box.replaceChildren(
      el(
        'div',
        {},
        el('button', {
          type: 'button',
          class: 'close quiet',
          id: 'review-close',
          'aria-label': 'Close the review',
          text: '×',
          onclick: () => this.close(),
        }),
        el('h2', { text: 'Review changes by agents' }),
        el(
          'label',
          { class: 'review-since' },
          'Since ',
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
        ),
        this.error ? el('p', { class: 'field-error', role: 'alert', text: this.error }) : null,
        this.groups.length ? null : el('p', { class: 'empty', text: 'No agent changed anything since then.' }),
        el(
          'ol',
          { class: 'feed review-groups' },
          this.groups.map((g) =>
            el(
              'li',
              { 'data-request': g.requestId },
              el('time', { datetime: g.changes[0]!.at, text: new Date(g.changes[0]!.at).toLocaleString() }),
              el('strong', { text: `${g.agent}${g.user ? ` (${g.user})` : ''}: ${plural(g.changes.length, 'change')}` }),
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
                    p.conflicts.length
                      ? el(
                          'div',
                          { class: 'field-error', role: 'alert' },
                          el('p', { text: 'Someone changed things since:' }),
                          el(
                            'ul',
                            {},
                            p.conflicts.map((c) => el('li', { text: REASONS[c.reason](c) })),
                          ),
                        )
                      : null,
                    el('button', {
                      type: 'button',
                      class: p.conflicts.length ? 'danger review-confirm' : 'review-confirm',
                      text: p.conflicts.length ? 'Revert anyway (later changes are overwritten)' : 'Revert',
                      onclick: () => void this.revert(g, p.conflicts.length > 0),
                    }),
                    el('button', {
                      type: 'button',
                      class: 'quiet',
                      text: 'Cancel',
                      onclick: () => {
                        this.pending = null
                        this.draw()
                      },
                    }),
                  )
                : el('button', { type: 'button', class: 'review-revert', text: 'Revert…', onclick: () => void this.dryRun(g) }),
            ),
          ),
        ),
      ),
    )
  }
}
