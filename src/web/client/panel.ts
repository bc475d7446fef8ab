import { badge, chips, type Ui } from './chips.ts'
import { el, plural } from './dom.ts'
import { CHILD_NAMES, type PlanNode, TYPE_NAMES } from './model.ts'

/** The side panel: the selected node in full (notes too: this is the signed-in app), or the project at a glance. */
export function renderPanel(ui: Ui, panel: HTMLElement) {
  const n = ui.view.selected ? ui.plan.nodes.get(ui.view.selected) : undefined
  panel.replaceChildren(...(n ? details(ui, n) : overview(ui)).filter((x): x is HTMLElement => x !== null))
}

function details(ui: Ui, n: PlanNode): (HTMLElement | null)[] {
  const d = n.data
  const path = ui.plan
    .ancestors(n.id)
    .reverse()
    .map((id) => ui.plan.nodes.get(id)!)
  const facts: [string, unknown][] = [
    ['Iteration', d.iteration],
    ['Status', n.type === 'job' || n.type === 'task' ? (d.status === 'done' ? 'done' : 'open') : undefined],
    ['Completed', d.completedAt ? new Date(d.completedAt).toLocaleString() : undefined],
    ['Maturity', d.maturity],
    ['Measure', d.measure],
    ['Kano', d.kano],
    ['Size', d.size],
    ['Bet status', d.approachStatus],
    ['Goal status', d.goalStatus],
    ['Kind', d.kind],
    ['Urgent', d.urgent ? 'yes' : undefined],
    ['Blocked by', Array.isArray(d.blockedBy) && d.blockedBy.length ? d.blockedBy.join(', ') : undefined],
    ['Serves', Array.isArray(d.serves) && d.serves.length ? d.serves.join(', ') : undefined],
    ['Id', n.id],
    ['Created', n.createdAt ? new Date(n.createdAt).toLocaleString() : undefined],
  ]
  const kids = ui.plan.kids(n.id)
  const { done, total } = ui.plan.progress(n.id)
  const refs = Array.isArray(d.externalRefs) ? (d.externalRefs as { system: string; key: string; url: string }[]) : []
  return [
    path.length
      ? el(
          'ol',
          { class: 'path', 'aria-label': 'path' },
          path.map((p) =>
            el(
              'li',
              {},
              el(
                'button',
                { type: 'button', class: 'crumb', onclick: () => ui.act({ type: 'selectNode', nodeId: p.id }) },
                badge(p),
                el('span', { text: p.data.label }),
              ),
            ),
          ),
        )
      : null,
    el('div', { class: 'panel-head' }, badge(n), ...chips(n)),
    el('h2', { id: 'panel-label', text: d.label ?? '' }),
    d.description ? el('p', { class: 'desc', text: d.description }) : null,
    d.notes ? el('div', { class: 'notes' }, el('h4', { text: 'Notes' }), el('p', { text: d.notes })) : null,
    total && n.type !== 'job' ? el('p', { class: 'progress-line', text: `${done} of ${plural(total, 'job')} done` }) : null,
    el(
      'dl',
      { class: 'facts' },
      facts
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: String(v) })]),
    ),
    refs.length
      ? el(
          'div',
          { class: 'refs' },
          el('h4', { text: 'Links' }),
          refs.map((r) =>
            el('a', {
              href: /^https:\/\//.test(r.url) ? r.url : null,
              target: '_blank',
              rel: 'noopener noreferrer',
              text: `${r.system} ${r.key}`,
            }),
          ),
        )
      : null,
    kids.length
      ? el(
          'div',
          { class: 'kids' },
          el('h4', { text: `${kids.length} ${CHILD_NAMES[n.type] ?? 'item'}${kids.length === 1 ? '' : 's'}` }),
          el(
            'ul',
            {},
            kids.map((k) =>
              el(
                'li',
                {},
                el(
                  'button',
                  { type: 'button', class: 'kid', onclick: () => ui.act({ type: 'selectNode', nodeId: k.id }) },
                  badge(k),
                  el('span', { text: k.data.label }),
                  ...chips(k),
                ),
              ),
            ),
          ),
        )
      : null,
  ]
}

function overview(ui: Ui): HTMLElement[] {
  const count = (t: PlanNode['type']) => ui.plan.ofType(t).length
  const jobs = ui.plan.ofType('job')
  const done = jobs.filter((j) => j.data.status === 'done').length
  const current = ui.plan.current()
  return [
    el('p', { class: 'empty', text: 'Select a node to see its details.' }),
    el(
      'dl',
      { class: 'facts overview' },
      (['goal', 'need', 'approach', 'job', 'task'] as const).flatMap((t) => [
        el('dt', { text: `${TYPE_NAMES[t]}s` }),
        el('dd', { text: String(count(t)) }),
      ]),
      el('dt', { text: 'Jobs done' }),
      el('dd', { text: jobs.length ? `${done} of ${jobs.length}` : '—' }),
      el('dt', { text: 'Current iteration' }),
      el('dd', { text: current ?? '—' }),
    ),
  ]
}
