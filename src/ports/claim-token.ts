/**
 * The longest claim token a body may carry (docs/agents.md): held by the claim bodies' schemas
 * (src/work/model.ts, src/nodes/input.ts) and by the two reads of a body not yet checked
 * (src/claims/service.ts: a `work` key's access, a write's author), which take a longer token for
 * no claim without hashing it or asking the database. A leaf, so that a module that reads the
 * schemas (src/mcp, a client of the REST API) imports no service.
 */
export const CLAIM_TOKEN_MAX = 200
