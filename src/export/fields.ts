import type { FieldName } from '../ports/node-data'

/**
 * Where each node field stands in a node's file; a new field does not compile until it has a
 * place here. The frontmatter holds docs/reference/reads.md's custom keys (plus goalStatus, the one status field
 * it leaves out) in this order.
 */
const PLACE: Record<FieldName, 'frontmatter' | 'title' | 'body' | 'not exported'> = {
  status: 'frontmatter',
  maturity: 'frontmatter',
  kano: 'frontmatter',
  size: 'frontmatter',
  approachStatus: 'frontmatter',
  goalStatus: 'frontmatter',
  iteration: 'frontmatter',
  measure: 'frontmatter',
  kind: 'frontmatter',
  urgent: 'frontmatter',
  label: 'title',
  description: 'body',
  notes: 'body',
  blockedBy: 'body',
  serves: 'body',
  externalRefs: 'body',
  demand: 'body',
  completedAt: 'not exported',
}
export const FRONTMATTER_KEYS = (Object.keys(PLACE) as FieldName[]).filter((f) => PLACE[f] === 'frontmatter')
