import type { Command, NodeType, Plan, PresenceEntry, View } from './model.ts'

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

/**
 * One change this page made (one request), to take back with Ctrl+Z through `revert`
 * (history.md, 3 and 5): the ids of the changes its request recorded, the nodes they touched.
 */
export interface Undo {
  changeIds: string[]
  nodes: string[]
  /** what the status line says once it is taken back (“Restored “Ship v2”.”) */
  done: string
  /** what it is, for a message that it could not be taken back (“the rename of “Ship v2””) */
  what: string
  /** the node to select afterwards; null: the neighbour of the first of `nodes` (an add taken back) */
  focus: string | null
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
  /** the fields (`<id>:<field>`) whose save is on its way: Enter and the blur that follows send it once */
  saving: Set<string>
  /** a field's save refused as stale (409 stale_write): who changed it, when, to what, in words (stale.ts) */
  stale: Map<string, string>
  /** on a phone the details sheet shows only when asked */
  panelOpen: boolean
  /** this page's own changes, the last one last: Ctrl+Z takes back the last */
  undo: Undo[]
  /** changes taken back and the reverts that took them back (see undoLast in actions.ts) */
  undone: { changeIds: string[]; nodes: string[] }[]
  /**
   * load the whole plan again (after a revert, whose answer carries no nodes); it does not draw:
   * the caller renders, since the live stream's refresh compares with the plan loaded, not drawn
   */
  reload: () => Promise<void>
  /** matrix cells shown whole (`<row>|<iteration>`): past a few cards a cell is folded */
  unfolded: Set<string>
  /** a short message in the status line (with an Undo button when given one) */
  say: (text: string, undo?: () => void) => void
  /** who else is on the plan, and where (presence.ts) */
  presence: {
    on(nodeId: string): PresenceEntry[]
    editing(nodeId: string, field: string): PresenceEntry | undefined
  }
  /** fields (`<node>:<field>`) the person chose to edit although someone else is editing them: their writes say force */
  forced: Set<string>
}
