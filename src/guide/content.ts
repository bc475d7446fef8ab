import { ROLE_MAY, ROLES } from '../accounts/scope'
import { ENUMS, FIELDS, LIMITS, PARENT_TYPE, SHAPES } from '../nodes/model'
import { TOKEN_BUDGET } from '../tree/model'
import { OUTLINE_BUDGET } from '../tree/outline'
import { VIEW_COMMAND_TYPES } from '../view/model'
import { LIMITS as WORKFLOW_LIMITS } from '../workflow/model'
import { integrationsGuide } from './integrations'

/**
 * The hand-written half of the machine-readable guide: what a route table cannot say.
 * The endpoint list itself is read from the live app (guide/routes.ts), and the node field
 * rules from the node model, so neither drifts; a test checks every mutate action is here.
 */
export const actionsGuide: Record<string, { body: Record<string, unknown>; result: string; notes?: string[] }> = {
  add: {
    body: {
      action: 'add',
      projectId: 'string',
      node: {
        type: 'goal|need|approach|job|task',
        parentId: 'id, required for need, approach and job',
        data: { label: 'string, required' },
      },
    },
    result: '{success:true, node:{id,type,parentId,data}, _meta:{focus:{nodeId, viewCommand}, _tip?, advisory?}}',
    notes: [
      'Ids are generated as <type>-<number>; a client never supplies one outside a batch.',
      'A job or task without data.iteration lands in Later, and _meta._tip says so.',
      'kind is not accepted on creation: tasks are classified asynchronously, or at once with classify.',
      'On the free tier, at or over limits.node_cap of GET /tier-status an add gets 403 node_cap_reached.',
    ],
  },
  update: {
    body: {
      action: 'update',
      projectId: 'string',
      nodeId: 'string',
      data: { '<field>': 'new value; null clears it' },
      parentId: 'optional: reparent',
      ifRev: 'optional: the rev you read; 409 stale_write if a field you set changed since',
    },
    result: '{success:true, node, _meta}',
    notes: [
      'PATCH semantics: only the sent fields change; arrays are replaced whole.',
      'status "done" is refused inside a done iteration; send status "open" with iteration "Later" to move it out.',
      'An unknown nodeId gives 400 "Node with id <id> not found".',
    ],
  },
  delete: {
    body: {
      action: 'delete',
      projectId: 'string',
      nodeId: 'string',
      ifRev: 'optional: the rev you read; 409 stale_write if anything changed since',
    },
    result: '{success:true, deleted:{id,type}, orphanedChildren:[ids], changelogId, _meta}',
    notes: ['Removes everything beneath the node too; only the named node is kept in the changelog (GET /api/v1/changelog).'],
  },
  restore: {
    body: { action: 'restore', projectId: 'string', nodeId: 'string (latest deletion)', changelogId: 'or a changelog entry id' },
    result: '{success:true, node, _meta}',
    notes: [
      'Brings back the single node with its original id; children are not restored.',
      '409 when the id exists again; 404 when no deletion is on record; 500 "Failed to restore node" when the parent is gone: restore the parent first.',
    ],
  },
  batch: {
    body: {
      action: 'batch',
      projectId: 'string',
      mutations: [{ action: 'add|update|delete|addIteration', '...': 'the fields of that action, without projectId' }],
    },
    result: '{success:true, results:[one per entry], idMap:{draftId: realId}, _meta}',
    notes: [
      'Every entry is validated first; one bad entry rejects the batch with 400 "mutations[<index>]: ...".',
      'addIteration entries apply before node entries.',
      'Give an added node an id starting with draft- to use it as a later parentId; it is remapped to a real id.',
    ],
  },
  classify: {
    body: { action: 'classify', projectId: 'string', nodeId: 'task id' },
    result: '{success:true, node, _meta}',
    notes: ["Sets a task's kind (memo or do-it) now, and urgent for a do-it."],
  },
  addIteration: {
    body: {
      action: 'addIteration',
      projectId: 'string',
      iteration: { name: 'string, unique in the project', status: 'active|done, optional', gitTags: 'string array, optional' },
    },
    result: '{success:true, iteration, _meta}',
  },
  updateIteration: {
    body: {
      action: 'updateIteration',
      projectId: 'string',
      iterationName: 'string',
      data: { name: 'optional', status: 'active|done', gitTags: 'string array', sortOrder: 'integer' },
    },
    result: '{success:true, iteration, _meta}',
    notes: ['Marking done sets completedAt; back to active clears it. The system iteration Later cannot be renamed or closed.'],
  },
  deleteIteration: {
    body: { action: 'deleteIteration', projectId: 'string', iterationName: 'string' },
    result: '{success:true, deleted:{name}, movedToLater:[node ids], _meta}',
    notes: ['Refused for system iterations; its jobs and tasks move to Later.'],
  },
  reorderIterations: {
    body: { action: 'reorderIterations', projectId: 'string', order: ['every iteration name, in the new order'] },
    result: '{success:true, iterations}',
  },
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
  claim: {
    body: {
      action: 'claim',
      projectId: 'string',
      agent: 'string, 1 to 100 characters (e.g. claude-code@laptop)',
      nodeIds: 'optional: exactly these work items, all or none',
      count: 'optional, 1 to 20 (default 1): without nodeIds, up to this many ready items',
      leaseSeconds: 'optional, 30 to 86400 (default 900)',
    },
    result: '{success:true, claims:[{nodeId, agent, claimToken, expiresAt}], _meta}',
    notes: [
      'With count: ready items in GET /ready order, spread first (one per approach, a task its own, then a second per approach). None ready: claims:[] with a _tip.',
      "With nodeIds: each must exist (404) and be a ready work item, or 409 {error:'not_claimable', items:[{nodeId, reason: claimed|done|blocked|not_work}], holder?}.",
      'Atomic: concurrent claims never get the same item, on any replica.',
      'Keep claimToken secret; send it with update, delete or batch entries of that node. A write with a token that lost its claim gets 409 claim_lost; writes without a token are never refused.',
      'Marking the item done ends the claim, and so does deleting it.',
    ],
  },
  renewClaim: {
    body: { action: 'renewClaim', projectId: 'string', claimToken: 'string', leaseSeconds: 'optional, 30 to 86400 (default 900)' },
    result: '{success:true, claim:{nodeId, agent, claimToken, expiresAt}}',
    notes: [
      "Extends the lease from now. An unknown, expired or released token: 409 {error:'claim_lost'}.",
      'Rarely needed: a write carrying the claimToken, or a GET naming the node (nodeId=) with header X-Agent-Id: <agent>, renews the claim to its own length.',
    ],
  },
  releaseClaim: {
    body: { action: 'releaseClaim', projectId: 'string', claimToken: 'string' },
    result: '{success:true, released:{nodeId}}',
    notes: ["The item is ready again for others. An unknown, expired or released token: 409 {error:'claim_lost'}."],
  },
  revert: {
    body: {
      action: 'revert',
      projectId: 'string',
      changeIds: 'optional: 1 to 1000 changeIds of GET /history',
      filter: 'optional: {userId?, agent?, via?, requestId?, since?, until?}, at least one; the changes GET /history shows with it',
      dryRun: 'optional boolean: write nothing, answer what the call would do',
      force: 'optional boolean: go ahead despite conflicts',
    },
    result:
      '{success:true, reverted:N, changeIds:[the new changes], _meta}; dryRun: {success:true, dryRun:true, changes:[{target, action, before, after}], conflicts:[...]}',
    notes: [
      'Exactly one of changeIds and filter. A filter that selects more than 1000 changes: 400 with a _tip to narrow it.',
      'Undone newest first in one transaction, all or nothing: an add by deleting the node, an update by setting its changed fields back, a delete by restoring every removed node with its id, parents first; iterations alike, a rename or deletion before the moves of its jobs and tasks that came with it.',
      "A later change that is not selected touched the same field, deleted the target, or added a child under a node to delete: 409 {error:'revert_conflict', conflicts:[{changeId, target, field?, laterChangeId, reason: changed_later|gone|has_children}]} and nothing is written. force:true goes ahead (reverted values win; later children are deleted too).",
      "Recorded as changes with action 'revert' and revertOf, so a revert can be reverted. Events, webhooks and _meta.unblocked as for ordinary writes; the node cap does not apply; a claimed node is reverted like an edit without a token.",
    ],
  },
  propose: {
    body: {
      action: 'propose',
      projectId: 'string',
      title: 'string, 1-200 characters',
      note: 'optional string, at most 2000 characters',
      mutations: '1 to 500 batch entries (add, update, delete, addIteration; draft- ids as in batch)',
    },
    result:
      '{success:true, proposal:{proposalId, projectId, status:"open", title, note?, actor, createdAt, mutations, preview:{changes:[{target, action, before, after}]}, baseRevs:{nodeId: rev}}}',
    notes: [
      "Every rule of batch is checked now (a bad entry: batch's 400), but nothing is written to the tree: the batch runs as a dry run and is rolled back.",
      "preview is what applying it now would do, in the history's change shape; an added node's target.id is the id the batch would give it. baseRevs holds the rev of every existing node the mutations touch.",
      'Any member may propose (a key with role propose is enough). Event proposal.created.',
    ],
  },
  applyProposal: {
    body: { action: 'applyProposal', projectId: 'string', proposalId: 'string', force: 'optional boolean: apply despite conflicts' },
    result: '{success:true, proposal:{…, status:"applied", appliedBy, appliedAt, changeIds}, idMap}',
    notes: [
      "Its mutations as one batch in one transaction, each update and delete with its baseRevs entry as ifRev: a field changed since answers 409 stale_write (section 1's conflicts) and nothing is written; force:true applies it anyway.",
      'The changes it records carry proposal:{proposalId, actor} (the proposer); their own actor is who applied it. Take it back with revert of proposal.changeIds. Needs a key that may write. Event proposal.applied.',
      "Only an open proposal can be applied, rejected or withdrawn: 409 {error:'proposal_closed'}; an unknown proposalId: 404.",
    ],
  },
  rejectProposal: {
    body: { action: 'rejectProposal', projectId: 'string', proposalId: 'string', reason: 'optional string, at most 2000 characters' },
    result: '{success:true, proposal:{…, status:"rejected", rejectedBy, rejectedAt, reason?}}',
    notes: ['Nothing is written to the tree. Needs a key that may write. Event proposal.rejected.'],
  },
  withdrawProposal: {
    body: { action: 'withdrawProposal', projectId: 'string', proposalId: 'string' },
    result: '{success:true, proposal:{…, status:"withdrawn", withdrawnAt}}',
    notes: ["By its author only (the same user): anyone else gets 403 {error:'not_author'}. Event proposal.withdrawn."],
  },
}

/** The node rules of docs/reference/resources.md, read from the node model. */
export const nodeGuide = {
  types: Object.fromEntries(Object.entries(PARENT_TYPE).map(([type, parent]) => [type, { parent: parent ?? 'none' }])),
  fields: Object.fromEntries(
    Object.entries(FIELDS).map(([field, rule]) => [
      field,
      {
        on: rule.on,
        ...(field in ENUMS ? { values: ENUMS[field as keyof typeof ENUMS] } : {}),
        ...(field in SHAPES ? { shape: SHAPES[field as keyof typeof SHAPES] } : {}),
      },
    ]),
  ),
  limits: LIMITS,
}

export const commonGuide = {
  ...integrationsGuide,
  authentication: {
    header: 'Authorization: Bearer arb_<key>',
    keys: 'Per user, minted by the operator (admin API). A key reaches the projects its user owns or is a member of.',
    ownKeys: [
      'GET /api/v1/keys → {keys:[{keyId, label, prefix, createdAt, lastUsedAt, current, scope}]}: your live keys, never key material',
      'POST /api/v1/keys {label?, scope?:{role, projects?}} → 201 {apiKey, keyId}: the key is shown once; at most 20 live keys (409 key_limit)',
      'DELETE /api/v1/keys?keyId= → {success:true}: stops working at once; never your last key (409 last_key)',
      "Any key of role write without projects may manage its own user's keys, whatever the plan; any other key: 403 key_scope.",
    ],
    scopes: {
      roles: Object.fromEntries(ROLES.map((r) => [r, ROLE_MAY[r]])),
      projects: 'scope.projects (1–50 ids): the key works on these only; another project: 403 key_scope, GET /projects lists only these',
      default: "{role:'write'}: a key minted without a scope does everything its user may",
      refusal: "403 {error:'key_scope', message (the role and what it may), _meta:{_tip (how to get a key that may)}}",
      role: 'GET /api/v1/tier-status names the calling key’s role in its X-Arbor-Key-Role header',
    },
    unauthenticated: ['GET /api/v1/guide', 'GET /api/v1/workflow', 'GET /healthz', 'GET /readyz', 'GET /openapi.json'],
  },
  errors: {
    validation: '{success:false, errors:[message], _meta?:{guide,_tip}}',
    refusal: '{error:<code or message>, message?}',
    unknownPath: '404 {error:"unknown_endpoint", _meta:{_tip}}',
    wrongMethod: '405 {error:"method_not_allowed", message, _meta:{_tip}} with an Allow header',
    notJson: '400 {success:false, errors:["Request body is not valid JSON: at line L, column C (offset O), <what>"]}',
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
    jsonNesting: 'a body nested deeper than 64 levels is a 400',
    nulCharacters: 'a NUL (\\u0000) in a body, query parameter or path is a 400 naming the field',
    gitTags: 'at most 50 per iteration, each 1-200 characters',
    timestamps: 'RFC 3339 with a zone, e.g. 2026-05-01T12:00:00Z',
    writeCost:
      'embedded database (PGlite) only: a batch, propose or revert whose estimated database time is over PGLITE_WRITE_BUDGET_MS (default 150 ms; an add 0.1 ms, an update 0.5, a delete 1, each blockedBy/serves id 0.05) gets 413 write_too_costly {estimatedMs, limitMs, perRequestMax, _meta:{_tip}}, nothing written: send at most perRequestMax entries per batch, or revert in windows of at most perRequestMax changes',
  },
  versioning: 'Paths are under /api/v1. Unversioned /api/<name> paths keep working; most carry Deprecation: true and a Link to /api/v1.',
  revisions: {
    rev: 'Every node (beside id, in every answer) and every iteration carries rev: an opaque string that changes with every committed change of it and never repeats (a claim leaves it as it is).',
    ifRev:
      'update (moves included), delete, updateIteration, deleteIteration and their batch entries take ifRev, the rev the write is based on. Refused only when a field the write sets changed after it (a delete: anything); other fields may have changed. Without ifRev the last write wins.',
    conflict:
      "409 {error:'stale_write', message, conflicts:[{target:{kind, id}, field, yours, theirs, changeId, actor, at}], current:[the targets now, with rev], _meta:{_tip}}; nothing written (a batch as a whole); a replay of the Idempotency-Key answers the same 409; an unknown rev counts every field as changed.",
    retry: 'Merge your change into current, then send it again with ifRev set to the rev in current.',
  },
  proposals: {
    what: 'Agents propose, people decide: mutate propose stores a checked batch without touching the tree; a person applies (applyProposal) or rejects it; its author may withdraw it.',
    list: 'GET /api/v1/proposals?projectId&status?(open|applied|rejected|withdrawn)&after?&limit?(1-100, default 20) → {proposals:[…] newest first, next?, _meta:{open}}; pass next as after.',
    read: 'GET /api/v1/proposals/:proposalId?projectId → {proposal:{…, preview (fresh: what applying it now would do), conflicts:[section 1 conflicts against baseRevs], problem?}}; problem when a batch rule now refuses it (a target deleted since).',
    events:
      'proposal.created, proposal.applied, proposal.rejected, proposal.withdrawn: {event, project_id, timestamp, proposalId, title, actor} in GET /events; webhooks get them when they list them by name.',
    retention: 'Kept HISTORY_DAYS, as the changes.',
    mcp: "The mutate tool takes propose and withdrawProposal; get_history with proposals:'open'|'all'|<proposalId> reads them.",
  },
  history: {
    actors:
      "Every write names its actor {userId, userName, keyId, agent?, via}: agent from a claim's agent, else the X-Agent-Id header (1-100 characters); via from X-Arbor-Via: app|mcp|cli, workflow for a workflow's apply, else api. agent and via are labels, never a permission.",
    changes:
      'Every committed write records one change per node or iteration it touched, in the same transaction: {changeId, at, actor, requestId, action, target:{kind, id, type?}, before, after, fields, revertOf?}; before/after are {parentId, data} (an iteration: name, status, sortOrder, gitTags), null before an add and after a delete; a delete records the named node and every descendant. Claims are not changes.',
    request:
      'GET /api/v1/history?projectId&nodeId?&userId?&agent?&via?&requestId?&since?&until?&after?&limit?(1-200, default 50) → {changes:[…] newest first, next?, _meta}; pass next as after; filters combine with AND; a deleted node keeps its history.',
    events: 'Every event of GET /events and every webhook payload carries actor:{userId, userName, agent?, via}.',
    retention:
      'Changes are kept HISTORY_DAYS (default 365; 0 for ever), travel in backups, and never show on share views or in the OKF export.',
    undo: 'Take changes back with mutate revert (changeIds or filter, dryRun first).',
  },
  workflow: {
    catalog:
      'GET /api/v1/workflow (no authentication): the protocol, the flows add, task-curate and phase-assign, and the JSON Schema of the answer each step accepts',
    start: 'POST /api/v1/workflow {projectId, action:"start", flow, input} → {done:false, prompt, state}',
    advance:
      'POST /api/v1/workflow {projectId, action:"advance", state, response:<your model\'s JSON object with a string signal>, nextInput?} → the next {done:false, prompt, state}, or {done:true, changeset, focus, message, _meta:{viewCommand}}',
    loop: 'Send prompt to your own model, parse its one JSON object, advance with it; on 400 retry:true give the model the error and advance again with the same state.',
    state: 'opaque and signed; bound to the project and the user; valid 24 hours after it was issued; carries the last 100 turns',
    apply:
      'The final answer is applied through the batch of POST /mutate in one transaction, once per (state, response): a repeat gets 500 alreadyApplied.',
    limits: WORKFLOW_LIMITS,
  },
  view: {
    command: `POST /api/v1/view-command {projectId, command:{type, …}}; type one of ${VIEW_COMMAND_TYPES.join(', ')} → {success, command, commandId, _meta}; success:true means queued, not applied`,
    fields:
      'setViewMode {mode: tree|matrix}; selectIteration {iterationName}; zoomToNode, expandNode, expandAll, collapseNode {nodeId}; selectNode {nodeId?} (omit to deselect); focusGoals {goalIds:[…]}; autoSwitch:false keeps selectNode/zoomToNode on a job or task out of the matrix',
    refusals:
      'an unknown type is 400 {error:"Invalid command", validTypes}; a target that does not resolve (unknown node, iteration or goal, empty iterationName or goalIds) is 200 {success:false, _meta:{_tip}} and nothing is queued',
    confirm:
      'GET /api/v1/view-state?projectId → {view_mode, selected_iteration, expanded_nodes, focused_goals, selected_node, updated_at, last_applied_command:{id,type,at}|null, command_seq, clients_connected, last_client_seen}; poll until last_applied_command.id equals your commandId',
    app: 'The live canvas is /app?projectId=<id>#key=<API key>; while no page is open (clients_connected:false) commands wait in the queue and are applied in order when one opens.',
    tier: 'needs has_realtime of GET /tier-status (builder and team; every member of a team-owned project); otherwise 403 {error:"realtime_unavailable", message}',
    appCalls:
      "the page's own calls: GET /api/v1/view/commands?projectId&after=<last applied id>&wait=<ms, at most 15000>&revision=<previous revision> (long poll and heartbeat: the queued commands, or an answer as soon as the tree changed after revision) and POST /api/v1/view/report {projectId, applied:{id,type}|null, state:{view_mode, selected_iteration, expanded_nodes, focused_goals, selected_node}}",
  },
  mcp: {
    stdio:
      'npx arbor mcp in a checkout (or `arbor mcp` from the single executable), with ARBOR_API_KEY, ARBOR_PROJECT_ID (optional) and ARBOR_API_URL (default http://localhost:3000/api/v1)',
    http: 'Streamable HTTP at /mcp on this server, with Authorization: Bearer <API key>; ARBOR_PROJECT_ID means nothing there',
    tools:
      'search, list_nodes, get_tree, mutate (idempotencyKey), list_iterations (current), run_workflow, set_view, read_view, submit_feedback, list_projects, get_outline, ready_work, claim_work, release_work, get_history: each one REST call, with readOnlyHint/destructiveHint/idempotentHint, an outputSchema and structuredContent',
    readOnly: 'ARBOR_MCP_READ_ONLY=1 (stdio) or /mcp?readOnly=1 (HTTP): only the tools that change nothing',
    projectId:
      'without a projectId argument and without a default project (ARBOR_PROJECT_ID over stdio), a project-scoped tool answers a tool error naming list_projects',
  },
  outline: {
    request: `GET /api/v1/outline?projectId[&nodeId=<id>][&budget=<o200k_base tokens ${TOKEN_BUDGET.min}-${TOKEN_BUDGET.max}, default ${TOKEN_BUDGET.default}>]`,
    result: '{outline:<markdown>, tokens, elided, _meta:{budget, nodeCount, shown, _tip?}}',
    rendering: [
      'One line per node: "- [job-12] label · open · Sprint 1 · claimed by x", indented under its parent; the subtree of nodeId, or the whole project (standalone tasks after the goals).',
      'Open parts are admitted before done ones (done jobs and tasks, resolved or retired approaches, done goals), each breadth-first; what does not fit is folded under its parent as "- … 14 more jobs (9 done)". Descriptions follow " — " on shown lines while they fit.',
      'tokens is the o200k_base count of outline and never exceeds budget; elided counts the nodes without a line of their own.',
      'budget not an integer from 200 to 50000: 400 {success:false, errors}; unknown nodeId: 404 {error:"Node <id> not found"}; access as GET /tree.',
    ],
  },
  work: {
    ready:
      'GET /api/v1/ready?projectId&iteration?&limit?(1-100, default 20) → {items:[{node:{id,type,parentId,data}, ancestors:[{id,type,label}] root first, blockedBy:[]}], _meta:{total, claimed, blocked}}',
    rule: [
      'A work item is a job or a do-it task. It is ready when open (not done), not held by a live claim, and for a job: its approach is not resolved or retired, every approach in its blockedBy is clear, and its goal is not done.',
      'A blocker is clear when it no longer exists, is resolved or retired, or has at least one job and all its jobs are done.',
      'Order: urgent tasks; then the current iteration, the other active iterations by sortOrder, then Later; then jobs under a focus goal; then creation.',
      '_meta.total counts ready items, claimed the items held by a live claim, blocked the open items not ready for another reason.',
    ],
    claims:
      'Claim before working (mutate claim), send claimToken with your writes of the item, mark it done with update data:{status:"done"} (which ends the claim), or releaseClaim. GET /nodes and GET /tree show claim:{agent, expiresAt} beside data while a claim is live.',
    wakeUps: [
      'A write that marks work done, resolves or retires an approach, or deletes a node answers _meta.unblocked:[ids]: the work items it made ready (present whenever the project had blocked work before the write).',
      'GET /api/v1/events?projectId&after=<cursor>&wait=<0-60>: an empty page is held until an event arrives or wait seconds pass. Waiting requests are not counted against the rate limit.',
      'Events node.claimed and node.released ({nodeId, agent, expiresAt?}) are in GET /events; webhooks get them only when they list them.',
      'GET /api/v1/stream?projectId (text/event-stream): every event of GET /events as it commits, id: its cursor; reconnect with Last-Event-ID to resume without a gap; event: reset {reason:"cursor_expired"} means read the tree again; event: presence says who is where.',
    ],
    presence: [
      'POST /api/v1/presence {projectId, nodeId?, field?, note? (≤100)} → {presence:{actor, nodeId?, field?, note?, since, expiresAt}, expiresAt}: held 30 s, post again to keep it; one per actor (user, X-Agent-Id, X-Arbor-Via) and project. DELETE /api/v1/presence?projectId ends it.',
      'GET /api/v1/presence?projectId → {presence:[{actor:{userId, userName, agent?, via}, nodeId?, field?, note?, since, expiresAt, claim?}]}; agents holding a live claim are listed with claim:true.',
      'A presence with field is an edit intent: another actor’s update setting that field of that node answers 409 {error:"being_edited", target, field, by:{actor}, until}; send force:true on the update (or batch entry) to write anyway.',
    ],
  },
  treeOutline: {
    request: `GET /api/v1/tree?projectId&format=outline&budget=<characters ${OUTLINE_BUDGET.min}-${OUTLINE_BUDGET.max}, default ${OUTLINE_BUDGET.default}>[&nodeId=<id>]`,
    result: '{outline:<text>, _meta:{format, budget, chars, nodeCount, shown, _tip?}}',
    rendering: [
      'One line per node: id (which starts with its type), label in quotes (clipped at 100 characters), status fields in brackets; children indented under their parent, so the lines above a node are its path.',
      'Nodes are admitted breadth-first (goals, needs, approaches, jobs; tasks last) while the text fits the budget; each hidden subtree is summarised under its nearest shown ancestor as counts per type with how many are done.',
      'With nodeId: the path from the root to that node, then its subtree. Without it: the whole project. direction does not apply.',
      'The workflow prompts show the project the same way with a budget of 12,000 characters (about 3,000 tokens).',
    ],
  },
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
