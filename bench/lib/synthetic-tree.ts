// A deterministic synthetic planning tree (goals > needs > approaches > jobs, plus tasks) with
// short generated sentences, for the search benchmarks: the same seed gives the same tree.

let seed = 42
export const reseed = (s: number) => {
  seed = s
}
export const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32
export const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!
export const SUBJECTS = [
  'customers',
  'admins',
  'accountants',
  'payers',
  'sellers',
  'new users',
  'support agents',
  'finance teams',
  'partners',
  'managers',
]
export const VERBS = [
  'export',
  'approve',
  'review',
  'search',
  'schedule',
  'import',
  'share',
  'archive',
  'sign',
  'reconcile',
  'track',
  'preview',
  'edit',
  'merge',
  'audit',
]
export const OBJECTS = [
  'invoices',
  'receipts',
  'payment reminders',
  'tax reports',
  'expense claims',
  'purchase orders',
  'credit notes',
  'bank feeds',
  'contracts',
  'price lists',
  'timesheets',
  'refunds',
  'subscriptions',
  'dashboards',
  'user roles',
  'webhooks',
  'currency rates',
  'ledgers',
  'quotes',
  'payouts',
]
export const QUALIFIERS = [
  'in bulk',
  'from the mobile app',
  'without leaving the inbox',
  'in under a minute',
  'with one click',
  'by email',
  'on a schedule',
  'across all workspaces',
  'in their own language',
  'with an audit trail',
  'offline',
  'from a CSV file',
]
const sentence = () => `${pick(SUBJECTS)} can ${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)}`
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1)

export type Draft = { id: string; type: string; parentId?: string; data: Record<string, unknown> }
export function tree(total: number): Draft[] {
  const out: Draft[] = []
  const goals = Math.max(1, Math.round(total / 1000))
  const needs = goals * 5
  const approaches = Math.round(total / 20)
  const tasks = Math.round(total / 10)
  const jobs = total - goals - needs - approaches - tasks
  for (let g = 0; g < goals; g++)
    out.push({
      id: `draft-g${g}`,
      type: 'goal',
      data: { label: cap(`grow ${pick(OBJECTS)} ${pick(QUALIFIERS)}`), description: cap(sentence()) },
    })
  for (let n = 0; n < needs; n++)
    out.push({ id: `draft-n${n}`, type: 'need', parentId: `draft-g${n % goals}`, data: { label: cap(sentence()) } })
  for (let a = 0; a < approaches; a++)
    out.push({
      id: `draft-a${a}`,
      type: 'approach',
      parentId: `draft-n${a % needs}`,
      data: {
        label: cap(`${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)}`),
        description: cap(sentence()),
        measure: `Share of ${pick(OBJECTS)} handled ${pick(QUALIFIERS)}`,
      },
    })
  for (let j = 0; j < jobs; j++)
    out.push({ id: `draft-j${j}`, type: 'job', parentId: `draft-a${j % approaches}`, data: { label: cap(sentence()) } })
  for (let t = 0; t < tasks; t++)
    out.push({ id: `draft-t${t}`, type: 'task', data: { label: cap(`${pick(VERBS)} the ${pick(OBJECTS)} for ${pick(SUBJECTS)}`) } })
  return out
}

/**
 * The goal `npm run bench` and `npm run bench:profile` read as a tree: 25 nodes, 4 needs, an
 * approach under each, 4 jobs under each approach (draft ids; the goal is `draft-g`). The same
 * labels every time (its own seed), so both read the same bytes.
 */
export function benchGoal(): Draft[] {
  reseed(3)
  const label = (i: number) => `${pick(SUBJECTS)} can ${pick(VERBS)} ${pick(OBJECTS)} ${pick(QUALIFIERS)} (${i})`
  return [
    { id: 'draft-g', type: 'goal', data: { label: 'Grow invoices in bulk', description: label(0) } },
    ...[0, 1, 2, 3].flatMap((n) => [
      { id: `draft-n${n}`, type: 'need', parentId: 'draft-g', data: { label: label(n) } },
      { id: `draft-a${n}`, type: 'approach', parentId: `draft-n${n}`, data: { label: label(n), description: label(n + 10) } },
      ...[0, 1, 2, 3].map((j) => ({ id: `draft-j${n}-${j}`, type: 'job', parentId: `draft-a${n}`, data: { label: label(j) } })),
    ]),
  ]
}
