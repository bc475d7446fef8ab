import type { FieldName } from '../ports/node-data'
import type { PublicNode } from './service'

/**
 * The public share page at /s/<token>: the shared tree as plain, readable HTML. No script and
 * nothing fetched: the view is rendered on the server, every value escaped, so a label can never
 * become markup.
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

const TYPE_NAMES: Record<string, string> = { goal: 'Goal', need: 'Need', approach: 'Bet', job: 'Job', task: 'Task' }

type Chip = (d: PublicNode['data'], type: PublicNode['type']) => string | null | undefined
const isWork = (type: string) => type === 'job' || type === 'task'

/**
 * What the page shows of each node field, so a new field does not compile until it says: the
 * statuses a reader cares about as chips (goal and bet states, done or open, maturity, iteration,
 * in this order), the texts under the label (renderNode), or nothing.
 */
const SHOWN: Record<Exclude<FieldName, 'notes'>, Chip | 'label' | 'text' | 'not shown'> = {
  goalStatus: (d, type) => (type === 'goal' ? d.goalStatus : null),
  approachStatus: (d, type) => (type === 'approach' ? d.approachStatus : null),
  kano: (d, type) => (type === 'approach' ? d.kano : null),
  size: (d, type) => (type === 'approach' ? d.size : null),
  status: (d, type) => (isWork(type) ? (d.status === 'done' ? 'done' : 'open') : null),
  maturity: (d, type) => (isWork(type) ? d.maturity : null),
  iteration: (d, type) => (isWork(type) && d.iteration ? `iteration: ${d.iteration}` : null),
  label: 'label',
  description: 'text',
  measure: 'text',
  blockedBy: 'not shown',
  serves: 'not shown',
  externalRefs: 'not shown',
  demand: 'not shown',
  kind: 'not shown',
  urgent: 'not shown',
  completedAt: 'not shown',
}
const CHIPS = Object.values(SHOWN).filter((shown): shown is Chip => typeof shown === 'function')

function chips(n: PublicNode): string[] {
  return CHIPS.flatMap((chip) => chip(n.data, n.type) || [])
}

function renderNode(n: PublicNode, children: Map<string, PublicNode[]>, depth: number): string {
  const d = n.data
  const status = chips(n)
    .map((c) => `<span class="chip${c === 'done' ? ' done' : ''}">${escapeHtml(c)}</span>`)
    .join(' ')
  const parts = [
    `<div class="head"><span class="type ${escapeHtml(n.type)}">${TYPE_NAMES[n.type] ?? escapeHtml(n.type)}</span>`,
    ` <span class="label">${escapeHtml(d.label)}</span>${status ? ` ${status}` : ''}</div>`,
  ]
  if (d.description) parts.push(`<p class="desc">${escapeHtml(d.description)}</p>`)
  if (n.type === 'approach' && d.measure) parts.push(`<p class="measure">Measure: ${escapeHtml(d.measure)}</p>`)
  const kids = children.get(n.id) ?? []
  // depth guard: a corrupt parent cycle must not recurse forever
  if (kids.length && depth < 16) parts.push(`<ul>${kids.map((k) => renderNode(k, children, depth + 1)).join('')}</ul>`)
  return `<li class="node">${parts.join('')}</li>`
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex,nofollow"><title>${escapeHtml(title)}</title><link rel="stylesheet" href="/app/app.css"></head>
<body class="page"><main>${body}<footer>Read-only view shared from Arbor.</footer></main></body></html>`
}

/** The HTML of a shared tree: goals with their needs, bets and jobs nested, then standalone tasks. */
export function renderSharePage(view: { project: { name: string }; nodes: PublicNode[] }): string {
  const ids = new Set(view.nodes.map((n) => n.id))
  const children = new Map<string, PublicNode[]>()
  const roots: PublicNode[] = []
  for (const n of view.nodes) {
    if (n.parentId && ids.has(n.parentId)) children.set(n.parentId, [...(children.get(n.parentId) ?? []), n])
    else if (n.type !== 'task') roots.push(n)
  }
  const tasks = view.nodes.filter((n) => n.type === 'task')
  const counts = `${view.nodes.length} item${view.nodes.length === 1 ? '' : 's'}`
  let body = `<h1>${escapeHtml(view.project.name)}</h1><p class="sub">Shared plan · ${counts}</p>`
  body += roots.length
    ? `<ul>${roots.map((r) => renderNode(r, children, 0)).join('')}</ul>`
    : '<p class="empty">Nothing is shared in this view.</p>'
  if (tasks.length) body += `<h2>Tasks</h2><ul>${tasks.map((t) => renderNode(t, children, 0)).join('')}</ul>`
  return page(`${view.project.name} · shared plan`, body)
}

export function renderNotFoundPage(): string {
  return page(
    'Share link not found',
    '<h1>Share link not found</h1><p class="sub">This link does not exist, was revoked or has expired.</p>',
  )
}

/** Headers for both pages: no caching (revocation is immediate), no referrer leaking the token, nothing but Arbor's own stylesheet (the live canvas's). */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
}
