/**
 * The hand-written half of the machine-readable guide: what a route table cannot say.
 * The endpoint list itself is read from the live app (guide/routes.ts), so it never drifts.
 */
export const actionsGuide: Record<string, { body: Record<string, unknown>; result: string; notes?: string[] }> = {
  addProject: {
    body: { action: 'addProject', project: { name: 'string, required, at most 100 characters', id: 'optional' } },
    result: '{success:true, project:{id,name}, iterations:[{name:"Later",status:"active",system:true}]}',
    notes: [
      'Default id: the name lowercased, whitespace replaced by dashes, other punctuation kept.',
      'Ids are 2 to 63 lowercase letters, digits and dashes, starting with a letter or digit.',
      'Ignores Idempotency-Key: pass an explicit project.id so a repeat fails on the existing project.',
    ],
  },
  renameProject: {
    body: { action: 'renameProject', projectId: 'string', name: 'string' },
    result: '{success:true, project:{id,name}, _meta}',
    notes: ['Owner only; the id never changes.'],
  },
}

export const commonGuide = {
  authentication: {
    header: 'Authorization: Bearer arb_<key>',
    keys: 'Per user, minted by the operator (admin API). A key reaches the projects its user owns or is a member of.',
    unauthenticated: ['GET /api/v1/guide', 'GET /api/v1/workflow', 'GET /healthz', 'GET /readyz', 'GET /openapi.json'],
  },
  errors: {
    validation: '{success:false, errors:[message], _meta?:{guide,_tip}}',
    refusal: '{error:<code or message>, message?}',
    unknownPath: '404 {error:"unknown_endpoint", _meta:{_tip}}',
  },
  idempotency: {
    header: 'Idempotency-Key (or body field idempotencyKey)',
    rules: [
      'Same key and same body: the stored response is replayed with header Idempotent-Replayed: true.',
      'Same key, different body: 409.',
      'First request still running: 409; retry shortly.',
      'Keys are remembered for 24 hours per user. addProject ignores the key.',
    ],
  },
  limits: {
    requestsPerMinutePerIp: 'RATE_LIMIT_PER_MINUTE (default 100); 429 with Retry-After',
    projectName: 100,
    projectId: '2 to 63 characters',
    feedback: 'summary 1-200, details 5000, context 4 KB, 20 per account per 24 h',
  },
  versioning: 'Paths are under /api/v1. Unversioned /api/<name> paths keep working; most carry Deprecation: true and a Link to /api/v1.',
  meta: {
    _tip: 'a next-step or recovery hint',
    advisory: 'structured backpressure, e.g. {type:"node_cap_reached", current, node_cap}',
    focus: '{nodeId, viewCommand} after a write; viewCommand is a complete POST /view-command body',
    guide: 'on 400/401/403 from mutate, search, nodes, tree, iterations and workflow: this guide',
  },
  examples: [
    { title: 'List your projects', request: 'GET /api/v1/projects' },
    {
      title: 'Create a project',
      request: 'POST /api/v1/mutate',
      body: { action: 'addProject', project: { name: 'Launch plan', id: 'launch-plan' } },
    },
  ],
}
