import type { Ui } from './ctx.ts'
import { el } from './dom.ts'
import { CHILD_NAMES, type PlanNode, TYPE_NAMES } from './model.ts'

export type { Ui }

export const badge = (n: Pick<PlanNode, 'type'>) =>
  el('span', {
    class: `type ${n.type}`,
    text: TYPE_NAMES[n.type] ?? n.type,
    // the app says bet; the API, the ids and the docs say approach
    title: n.type === 'approach' ? 'Bet: the API calls it an approach (type approach)' : null,
  })

/** The statuses a reader looks for, per type: goal and bet states, sizes, kano, done or open, maturity. */
export function chips(n: PlanNode): HTMLElement[] {
  const d = n.data
  const out: HTMLElement[] = []
  const chip = (text: string, kind = '') => out.push(el('span', { class: `chip${kind ? ` ${kind}` : ''}`, text }))
  if (n.type === 'goal' && d.goalStatus) chip(d.goalStatus, `goal-${d.goalStatus}`)
  if (n.type === 'approach') {
    if (d.approachStatus) chip(d.approachStatus, `bet-${d.approachStatus}`)
    if (d.size) chip(d.size, 'size')
    if (d.kano) chip(d.kano)
  }
  if (n.type === 'job' || n.type === 'task') {
    chip(d.status === 'done' ? 'done' : 'open', d.status === 'done' ? 'done' : 'open')
    if (d.maturity) chip(d.maturity)
  }
  if (n.type === 'task' && d.kind) chip(d.urgent ? `${d.kind} · urgent` : d.kind, d.urgent ? 'urgent' : '')
  if (n.claim)
    out.push(
      el('span', {
        class: 'chip claim',
        title: `claimed until ${new Date(n.claim.expiresAt).toLocaleString()}`,
        text: `claimed by ${n.claim.agent}`,
      }),
    )
  return out
}

/** "3/5 jobs done" under a goal, need or bet; the number of children when it is collapsed. */
export function summary(ui: Ui, n: PlanNode, open: boolean): HTMLElement | null {
  if (n.type === 'job' || n.type === 'task') return null
  const kids = ui.plan.kids(n.id)
  const { done, total } = ui.plan.progress(n.id)
  const parts: string[] = []
  if (!open && kids.length) parts.push(`${kids.length} ${CHILD_NAMES[n.type] ?? 'item'}${kids.length === 1 ? '' : 's'}`)
  if (total) parts.push(`${done}/${total} jobs done`)
  if (!parts.length) return null
  const bar = total ? el('span', { class: 'meter', title: `${done} of ${total} jobs done` }, el('span', { class: 'meter-fill' })) : null
  if (bar) (bar.firstChild as HTMLElement).style.width = `${Math.round((done / total) * 100)}%`
  return el('span', { class: 'count' }, parts.join(' · '), bar)
}
