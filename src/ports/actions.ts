/**
 * The names of POST /mutate's actions, in the order the API lists them (the message for an
 * unknown action, OpenAPI's body, the MCP tool): the one list every per-action table is keyed by.
 * Here, on the ports floor, so that `accounts` (ACTION_NEEDS) and `mutate` (the action table and
 * its bodies) share it: a table typed `Record<ActionName, …>` fails `tsc` for a misspelt name or a
 * missing row. A new action is a name here, then a row in each table the compiler asks for.
 */
export const ACTION_NAMES = [
  'add',
  'update',
  'delete',
  'restore',
  'batch',
  'classify',
  'addIteration',
  'updateIteration',
  'deleteIteration',
  'reorderIterations',
  'addProject',
  'renameProject',
  'claim',
  'renewClaim',
  'releaseClaim',
  'revert',
  'propose',
  'applyProposal',
  'rejectProposal',
  'withdrawProposal',
] as const

export type ActionName = (typeof ACTION_NAMES)[number]

/** Whether a name a client sent is one of the actions (a name of Object.prototype, or no string, is none). */
export const isActionName = (name: unknown): name is ActionName =>
  typeof name === 'string' && (ACTION_NAMES as readonly string[]).includes(name)
