import type { Command, NodeType, Plan, View } from './model.ts'

/** A label being edited in place: an existing node's (`id`), or a new one's not written yet (`id: null`). */
export interface Edit {
  id: string | null
  type: NodeType
  parentId: string | null
  value: string
  /** the label when editing began: a live change to it is shown, never typed over */
  original: string
  error?: string
}

/** A delete this page made, to undo with Ctrl+Z: the changelog ids, parents first. */
export interface Undo {
  label: string
  restore: { nodeId: string; changelogId: number; depth: number }[]
}

/** Everything the parts of the page share. */
export interface Ui {
  projectId: string
  plan: Plan
  view: View
  /** a view command, from a click or a key: applied, shown, reported */
  act: (c: Command) => void
  render: () => void
  /** move the focus (and the selection, which follows it) to a node without redrawing the tree */
  select: (id: string | null) => void
  edit: Edit | null
  /** a refusal of the API, shown beside the node it was about */
  errors: Map<string, string>
  /** nodes changed by someone else: marked until the time given */
  marks: Map<string, number>
  /** nodes this page wrote, and when: their live echo is not "someone else" */
  mine: Map<string, number>
  /** fields of the details panel typed but not saved: name → typed value and the value it started from */
  drafts: Map<string, { value: string; original: string }>
  /** on a phone the details sheet shows only when asked */
  panelOpen: boolean
  undo: Undo[]
  /** matrix cells shown whole (`<row>|<iteration>`): past a few cards a cell is folded */
  unfolded: Set<string>
  /** a short message in the status line (with an Undo button when given one) */
  say: (text: string, undo?: () => void) => void
}
