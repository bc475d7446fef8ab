/**
 * A node's `data` as stored and answered: the fields of FIELDS (src/nodes/model.ts), each checked by type on
 * write (src/nodes/model.ts, src/nodes/write.ts), so a stored node's fields have these types. Other keys are refused on write
 * but typed `unknown` for readers of old rows.
 */
export interface NodeData {
  [field: string]: unknown
  label: string
  description?: string
  notes?: string
  iteration?: string
  status?: string
  maturity?: string
  measure?: string
  kano?: string
  size?: string
  approachStatus?: string
  goalStatus?: string
  blockedBy?: string[]
  serves?: string[]
  externalRefs?: { system: string; key: string; url: string }[]
  demand?: { who: string; at: string; revenue?: number; size?: string; source?: string; ask?: string }[]
  kind?: string
  urgent?: boolean
  completedAt?: string
}
