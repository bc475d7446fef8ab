/**
 * The outputSchema of each tool: the answer's main fields, enough for a client to validate
 * `structuredContent` and for a model to know what comes back, and no more (the whole tool
 * list is held to 3,500 tokens; test/process.mcp.test.ts measures it). Every answer may carry
 * more fields, `_meta` among them.
 */
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
})
const array = { type: 'array' }
const object = { type: 'object' }
const string = { type: 'string' }
const boolean = { type: 'boolean' }
const integer = { type: 'integer' }
/** an object or null: said in words, since a type list (`["object","null"]`) is what the Inspector's --strict refuses */
const objectOrNull = (description: string) => ({ description })

export const OUTPUT = {
  search: obj({ results: array }, ['results']),
  list_nodes: obj({ nodes: array }, ['nodes']),
  get_tree: obj({ nodes: array, outline: string }),
  mutate: obj({ success: boolean }, ['success']),
  list_iterations: obj({ iterations: array, iteration: objectOrNull('the current iteration, or null') }),
  run_workflow: obj({ done: boolean, prompt: string, state: string, changeset: array }, ['done']),
  set_view: obj({ success: boolean, commandId: integer }, ['success']),
  read_view: obj({ view_mode: string, last_applied_command: objectOrNull('{id, type, at} or null'), clients_connected: boolean }, [
    'view_mode',
  ]),
  submit_feedback: obj({ success: boolean, id: string }, ['success']),
  list_projects: obj({ projects: array }, ['projects']),
  get_outline: obj({ outline: string, tokens: integer, elided: integer }, ['outline', 'tokens', 'elided']),
  ready_work: obj({ items: array }, ['items']),
  claim_work: obj({ success: boolean, claims: array }, ['claims']),
  release_work: obj({ success: boolean, released: object }, ['released']),
  open_plan: obj({ outline: string }, ['outline']),
  plan_follow: obj({ commands: array, revision: string }, ['commands', 'revision']),
}
