import { type Static, Type } from '@sinclair/typebox'
import { refined, ruled } from '../../ports/schema-rules'

/**
 * The shape of a list of draft nodes, before the batch of POST /mutate checks what it says
 * (parents, fields, enums, limits): an array of 1 to `max` objects with a `draft-` id of their
 * own. The batch would keep a non-draft id as the real id, which a model must never choose.
 * That no id repeats is the rule of the answer that holds the list (`repeatedDraft`).
 */
const DraftNode = ruled(
  Type.Object({
    id: ruled(Type.String({ pattern: '^draft-[A-Za-z0-9_.-]{1,60}$' }), (_, at) => {
      const i = Number(/\[(\d+)\]\.id$/.exec(at)?.[1] ?? 0)
      return `${at} must be your own id starting with "draft-", e.g. "draft-${i + 1}"`
    }),
  }),
  (_, at) => `${at} must be an object {id, type, parentId, data}`,
)

export const Drafts = (max: number) =>
  ruled(Type.Array(DraftNode, { minItems: 1, maxItems: max }), (v, at) => {
    if (Array.isArray(v) && v.length > max) return `${at} has ${v.length} nodes; at most ${max} are allowed`
    const repeated = Array.isArray(v) && v.length ? repeatedDraft([{ at, drafts: v }]) : null
    return repeated ?? `${at} is required: a non-empty array of {id:"draft-…", type, parentId, data:{label}}`
  })
/** The drafts of a whole answer (add's draftNodes): no id twice. */
export const AnswerDrafts = (max: number) => refined(Drafts(max), (list) => !repeatedDraft([{ at: '', drafts: list as Draft[] }]))
export type Draft = Static<typeof DraftNode> & Record<string, unknown>

/** `at`'s first draft whose id an earlier one of `lists` (in order) already took: `at[i].id <id> is used twice; …`, or null. */
export function repeatedDraft(lists: { at: string; drafts: Draft[] }[]): string | null {
  const seen = new Set<string>()
  for (const { at, drafts } of lists)
    for (const [i, d] of drafts.entries()) {
      if (seen.has(d.id)) return `${at}[${i}].id ${d.id} is used twice; every draft id must be unique`
      seen.add(d.id)
    }
  return null
}

/** The drafts as the batch takes them: only the fields of a node. */
export const asNodes = (drafts: Draft[]): Record<string, unknown>[] =>
  drafts.map(({ id, type, parentId, data }) => ({ id, type, ...(parentId === undefined ? {} : { parentId }), data }))
