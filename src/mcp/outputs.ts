/**
 * The outputSchema of each tool: the answer's main fields, enough for a client to validate
 * `structuredContent` and for a model to know what comes back, and no more (the whole tool
 * list is held to 3,500 tokens; test/process.mcp.test.ts measures it). Every answer may carry
 * more fields, `_meta` among them. A field that may be null (the current iteration, the last applied
 * command) is left out: a type list such as `["object","null"]` is what the MCP Inspector's
 * `--strict` refuses, and a schema without a type is one it warns about.
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

export const OUTPUT = {
  search: obj({ results: array }, ['results']),
  list_nodes: obj({ nodes: array }, ['nodes']),
  get_tree: obj({ nodes: array, outline: string }),
  mutate: obj({ success: boolean }, ['success']),
  list_iterations: obj({ iterations: array }),
  run_workflow: obj({ done: boolean, prompt: string, state: string, changeset: array }, ['done']),
  set_view: obj({ success: boolean, commandId: integer }, ['success']),
  read_view: obj({ view_mode: string, command_seq: integer, clients_connected: boolean }, ['view_mode']),
  submit_feedback: obj({ success: boolean, id: string }, ['success']),
  list_projects: obj({ projects: array }, ['projects']),
  get_outline: obj({ outline: string, tokens: integer, elided: integer }, ['outline', 'tokens', 'elided']),
  ready_work: obj({ items: array }, ['items']),
  claim_work: obj({ success: boolean, claims: array }, ['claims']),
  release_work: obj({ success: boolean, released: object }, ['released']),
  open_plan: obj({ outline: string }, ['outline']),
  plan_follow: obj({ commands: array, revision: string }, ['commands', 'revision']),
}
