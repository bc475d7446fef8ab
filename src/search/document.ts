// What of a planning-tree node gets indexed, in one place, so the server and
// the benchmark index nodes the same way.

import type { FieldName } from '../ports/node-data'
import type { KeywordDoc } from './keyword-live.ts'

/**
 * Which node fields the keyword index reads as text; a new node field does not compile until it
 * says (weights per field live in keyword-live.ts).
 */
const SEARCHED = {
  label: true,
  description: true,
  notes: true,
  measure: true,
  iteration: false,
  status: false,
  maturity: false,
  kano: false,
  size: false,
  approachStatus: false,
  goalStatus: false,
  blockedBy: false,
  serves: false,
  externalRefs: false,
  demand: false,
  kind: false,
  urgent: false,
  completedAt: false,
} as const satisfies Record<FieldName, boolean>
type Searched = { [F in keyof typeof SEARCHED]: (typeof SEARCHED)[F] extends true ? F : never }[keyof typeof SEARCHED]
const SEARCHED_FIELDS = (Object.keys(SEARCHED) as (keyof typeof SEARCHED)[]).filter((f): f is Searched => SEARCHED[f])

/** The texts of a node that are indexed (a narrower view of its data). */
export type IndexedText = { [F in Searched]?: string | null }

/** Fields for the keyword index. */
export function keywordDoc(id: string, data: IndexedText): KeywordDoc {
  return { id, fields: Object.fromEntries(SEARCHED_FIELDS.map((f) => [f, data[f]])) }
}

/**
 * Texts to embed for a node; the node's semantic score is its best cosine over them (the last
 * is always its full text, which the near-duplicate check compares). One text: the label with
 * its description, or the label alone when there is no description. Notes and measure are left
 * to the keyword index: on the dev set adding them to the vectors diluted the paraphrase matches
 * more than it helped. A second vector of the label alone was dropped (issue 57): a short
 * label's cosine with an unrelated query runs high (a goal such as "Win and keep mid-market
 * customers" came near the top for many of the dev set's questions), and the best of two
 * vectors favours the nodes that have two. Without it, 5 of the dev set's 80 queries found more
 * and none fewer (semantic only; paraphrase recall@5 0.541 -> 0.600, docs/search.md), label
 * queries still come first through the keyword half, and a node costs one vector instead of two.
 */
export function embeddingTexts(data: IndexedText): string[] {
  const label = (data.label ?? '').trim()
  const description = (data.description ?? '').trim()
  const text = !description ? label : !label ? description : `${label}. ${description}`
  return [clip(text, MAX_EMBED_CHARS)]
}

/**
 * Longest text sent to an embedder. The built-in sentence encoder's cost grows with the text
 * (a 100 KB description would hold its worker for seconds, and every search behind it), and
 * what a node is about is in its first sentences anyway.
 */
export const MAX_EMBED_CHARS = 2000

/** Longest search query used; the rest is ignored (a query is a question, not a document). */
export const MAX_QUERY_CHARS = 1000

/** `text` cut to at most `max` characters, at a word boundary when there is one. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text
  const cut = text.slice(0, max)
  const space = cut.lastIndexOf(' ')
  return space > max * 0.8 ? cut.slice(0, space) : cut
}
