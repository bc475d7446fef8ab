/**
 * The body of every POST /mutate action as a TypeBox schema: one per action, combined into
 * MutateBody for OpenAPI, and importable without any service (the MCP server reuses them).
 *
 * Each schema also carries api.md's refusal message for its part (RULE): `parseAction` checks a
 * body and answers the first broken part with exactly the message and `_tip` the contract
 * expects. Parts marked `deferred` are documented here but checked by the node rules of
 * src/nodes (field on the wrong type, parents, references), which own those messages.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { ErrorListError, projectAccessDenied } from '../http/errors'
import { ENUMS, FIELDS, LIMITS, NODE_TYPES, type NodeType } from '../nodes/model'

type Refusal = string | { message: string; tip?: string } | Error
type Rule = Refusal | ((value: any) => Refusal)

const RULE = Symbol.for('arbor.mutate.rule')
const DEFERRED = Symbol.for('arbor.mutate.deferred')
const DISCRIMINATOR = Symbol.for('arbor.mutate.discriminator')
const PREFIX_ITEMS = Symbol.for('arbor.mutate.prefixItems')

const ruled = <T extends TSchema>(schema: T, rule: Rule): T => Object.assign(schema, { [RULE]: rule })
/** Documented, but its refusals come from the node rules in src/nodes. */
const deferred = <T extends TSchema>(schema: T): T => Object.assign(schema, { [DEFERRED]: true })
const discriminated = <T extends TSchema>(schema: T, key: string): T => Object.assign(schema, { [DISCRIMINATOR]: key })

// ---- node data: the field table of api.md ----

const enumOf = (values: readonly string[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  )
const text = (maxLength: number, description?: string) => Type.String({ maxLength, ...(description ? { description } : {}) })
const ids = (description: string, maxItems?: number) =>
  Type.Array(Type.String({ minLength: 1 }), { description, ...(maxItems ? { maxItems, uniqueItems: true } : {}) })

const FIELD_SCHEMAS: Record<keyof typeof FIELDS, TSchema> = {
  label: Type.String({ minLength: 1, maxLength: LIMITS.labelLength, pattern: '\\S', description: 'required; trimmed' }),
  description: text(LIMITS.textLength),
  notes: text(LIMITS.textLength, 'excluded from public share views'),
  iteration: Type.String({ description: 'the name of an iteration; a job or task without one lands in Later' }),
  status: enumOf(ENUMS.status, 'done, or open (stored as absent); delivered is deprecated and means not done yet'),
  maturity: enumOf(ENUMS.maturity),
  measure: text(LIMITS.textLength, 'how the bet is judged'),
  kano: enumOf(ENUMS.kano, 'performance is an alias of incremental'),
  size: enumOf(ENUMS.size),
  approachStatus: enumOf(ENUMS.approachStatus),
  goalStatus: enumOf(ENUMS.goalStatus),
  blockedBy: ids('ids of blocking approaches, never the approach itself'),
  serves: ids('ids of existing needs, never the bet’s own parent', LIMITS.serves),
  externalRefs: Type.Array(
    Type.Object(
      {
        system: Type.String({ minLength: 1, pattern: '\\S' }),
        key: Type.String({ minLength: 1, pattern: '\\S' }),
        url: Type.String({ pattern: '^https://', description: 'an https:// URL' }),
      },
      { additionalProperties: false },
    ),
    { maxItems: LIMITS.externalRefs, description: 'no system+key pair twice' },
  ),
  demand: Type.Array(
    Type.Object(
      {
        who: Type.String({ minLength: 1, pattern: '\\S' }),
        at: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a YYYY-MM-DD date' }),
        revenue: Type.Optional(Type.Number({ minimum: 0 })),
        size: Type.Optional(Type.String()),
        source: Type.Optional(Type.String()),
        ask: Type.Optional(Type.String()),
      },
      { additionalProperties: false },
    ),
    { maxItems: LIMITS.demand },
  ),
  kind: enumOf(ENUMS.kind, 'assigned by classification; never sent on creation'),
  urgent: Type.Boolean({ description: 'only on a do-it task' }),
  completedAt: Type.String({
    description: 'RFC 3339 with a time zone; set by the service when status becomes done',
    pattern: '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$',
  }),
}

const fieldsOf = (type: NodeType) => (Object.keys(FIELDS) as (keyof typeof FIELDS)[]).filter((f) => FIELDS[f].on.includes(type))

/** The `data` of a new node of one type: its fields only (kind is assigned by classification). */
const dataFor = (type: NodeType) =>
  Type.Object(
    Object.fromEntries(
      fieldsOf(type)
        .filter((f) => f !== 'kind' && f !== 'completedAt')
        .map((f) => [f, f === 'label' ? FIELD_SCHEMAS[f] : Type.Optional(FIELD_SCHEMAS[f])]),
    ),
    { additionalProperties: false, description: `the fields of ${type === 'approach' ? 'an' : 'a'} ${type}` },
  )

/** The `data` of an update: any field, null clears it (label cannot be cleared). */
export const NodeDataPatch = deferred(
  Type.Object(
    Object.fromEntries(
      (Object.keys(FIELDS) as (keyof typeof FIELDS)[]).map((f) => [
        f,
        Type.Optional(f === 'label' ? FIELD_SCHEMAS[f] : Type.Union([FIELD_SCHEMAS[f], Type.Null()])),
      ]),
    ),
    {
      additionalProperties: false,
      description: 'PATCH semantics: only the sent fields change; null clears a field; arrays are replaced whole',
    },
  ),
)

const NODE_TYPE_RULE = `node.type must be one of: ${NODE_TYPES.join(', ')}`
const parentIdFor = (type: NodeType) =>
  deferred(
    type === 'goal' || type === 'task'
      ? Type.Optional(Type.Null({ description: `${type === 'goal' ? 'a goal' : 'a task'} has no parent` }))
      : Type.String({ minLength: 1, description: `the id of the parent (${{ need: 'goal', approach: 'need', job: 'approach' }[type]})` }),
  )

/** `node` of an add: one variant per type, so each documents its parent and its fields. */
const nodeFor = (inBatch: boolean) =>
  discriminated(
    ruled(
      Type.Union(
        NODE_TYPES.map((type) =>
          Type.Object({
            type: Type.Literal(type),
            ...(inBatch
              ? {
                  id: Type.Optional(
                    deferred(Type.String({ description: 'a draft- id that later entries may use as parentId, or a real <type>-<n> id' })),
                  ),
                }
              : {}),
            parentId: parentIdFor(type),
            data: ruled(deferred(dataFor(type)), 'node.data is required: an object with at least a label'),
          }),
        ),
      ),
      (node) =>
        node && typeof node === 'object' && !Array.isArray(node)
          ? NODE_TYPE_RULE
          : {
              message: 'node is required: {type, parentId?, data:{label, ...}}',
              tip: 'Send {action:"add", projectId, node:{type:"goal", data:{label:"…"}}}',
            },
    ),
    'type',
  )

// ---- the actions ----

const ProjectId = ruled(Type.String({ minLength: 1, description: 'the project the action applies to' }), () => projectAccessDenied())
const IdempotencyKey = Type.Optional(
  ruled(
    Type.String({ minLength: 1, maxLength: 255, description: 'same as the Idempotency-Key header' }),
    'Idempotency-Key must be 1 to 255 characters',
  ),
)
const NodeId = (rule = 'nodeId is required') => ruled(Type.String({ minLength: 1 }), rule)
const NonBlank = (rule: string, description?: string) =>
  ruled(Type.String({ pattern: '\\S', ...(description ? { description } : {}) }), rule)

/** At most this many git tags per iteration, each 1 to this many characters. */
export const GIT_TAGS = { max: 50, length: 200 } as const
const GitTags = ruled(Type.Array(Type.String({ minLength: 1, maxLength: GIT_TAGS.length }), { maxItems: GIT_TAGS.max }), (value) =>
  !Array.isArray(value) || value.some((t) => typeof t !== 'string')
    ? 'gitTags must be an array of strings'
    : value.length > GIT_TAGS.max
      ? `gitTags must have at most ${GIT_TAGS.max} entries`
      : `gitTags entries must be 1 to ${GIT_TAGS.length} characters`,
)
const IterationStatus = ruled(Type.Union([Type.Literal('active'), Type.Literal('done')]), 'status must be one of: active, done')

export const NewIteration = ruled(
  Type.Object({
    name: NonBlank('iteration.name is required: a non-empty string', 'unique in the project; at most 100 characters after trimming'),
    status: Type.Optional(IterationStatus),
    gitTags: Type.Optional(GitTags),
  }),
  'iteration is required: {name, status?, gitTags?}',
)

/** A write's claim (agents-and-app.md, 2): refused with 409 claim_lost when the claim is no longer this token's. */
const ClaimToken = ruled(
  Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'the claimToken of your claim on this node: the write fails with 409 claim_lost once the claim is not yours',
  }),
  'claimToken must be the claimToken string of a claim',
)

const action = <A extends string, P extends Record<string, TSchema>>(name: A, properties: P, description: string) =>
  Type.Object({ action: Type.Literal(name), ...properties, idempotencyKey: IdempotencyKey }, { description, title: name })

export const AddBody = action('add', { projectId: ProjectId, node: nodeFor(false) }, 'Add one node.')
export const UpdateBody = action(
  'update',
  {
    projectId: ProjectId,
    nodeId: NodeId(),
    data: Type.Optional(ruled(Type.Union([NodeDataPatch, Type.Null()]), 'data must be an object of the fields to change')),
    parentId: Type.Optional(deferred(Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'reparent' }))),
    claimToken: Type.Optional(ClaimToken),
  },
  'Change the sent fields of a node (PATCH), and/or reparent it; send data and/or parentId.',
)
export const DeleteBody = action(
  'delete',
  { projectId: ProjectId, nodeId: NodeId(), claimToken: Type.Optional(ClaimToken) },
  'Delete a node and everything beneath it.',
)
export const RestoreBody = action(
  'restore',
  {
    projectId: ProjectId,
    nodeId: Type.Optional(NodeId('nodeId or changelogId is required')),
    changelogId: Type.Optional(
      ruled(
        Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[1-9][0-9]{0,14}$' })]),
        'changelogId must be a positive integer',
      ),
    ),
  },
  'Bring back a deleted node: its latest deletion by nodeId, or one changelog entry by changelogId.',
)

const BATCH_ACTIONS = ['add', 'update', 'delete', 'addIteration'] as const
export const MAX_BATCH = 1000
const entry = <P extends Record<string, TSchema>>(name: string, properties: P) =>
  Type.Object(
    {
      action: Type.Literal(name),
      projectId: Type.Optional(
        ruled(
          Type.String({ description: "entries carry no projectId of their own; if sent, the batch's" }),
          "entries carry no projectId of their own (the batch's projectId applies)",
        ),
      ),
      ...properties,
    },
    { title: `batch ${name}` },
  )
export const BatchEntry = discriminated(
  ruled(
    Type.Union([
      entry('add', { node: nodeFor(true) }),
      entry('update', {
        nodeId: NodeId(),
        data: UpdateBody.properties.data,
        parentId: UpdateBody.properties.parentId,
        claimToken: UpdateBody.properties.claimToken,
      }),
      entry('delete', { nodeId: NodeId(), claimToken: DeleteBody.properties.claimToken }),
      entry('addIteration', { iteration: NewIteration }),
    ]),
    `action must be one of: ${BATCH_ACTIONS.join(', ')}`,
  ),
  'action',
)
export const BatchBody = action(
  'batch',
  {
    projectId: ProjectId,
    mutations: Object.assign(
      ruled(Type.Array(BatchEntry, { minItems: 1, maxItems: MAX_BATCH }), (value) =>
        Array.isArray(value) && value.length > MAX_BATCH
          ? `mutations has ${value.length} entries; at most ${MAX_BATCH} are allowed per batch`
          : 'mutations is required: a non-empty array of add, update, delete or addIteration entries',
      ),
      { [PREFIX_ITEMS]: 'mutations' },
    ),
  },
  'Up to 1,000 add, update, delete and addIteration entries in one transaction; draft- ids are remapped.',
)
export const ClassifyBody = action(
  'classify',
  {
    projectId: ruled(Type.String({ minLength: 1 }), 'projectId is required: node ids are unique within a project, not across projects'),
    nodeId: NodeId(),
  },
  'Classify a task as memo or do-it now.',
)
export const AddIterationBody = action('addIteration', { projectId: ProjectId, iteration: NewIteration }, 'Create an iteration.')
const ITERATION_FIELDS = ['name', 'status', 'gitTags', 'sortOrder']
export const UpdateIterationBody = action(
  'updateIteration',
  {
    projectId: ProjectId,
    iterationName: NodeId('iterationName is required'),
    data: ruled(
      Type.Object(
        {
          name: Type.Optional(NonBlank('data.name is required: a non-empty string', 'the new name')),
          status: Type.Optional(IterationStatus),
          gitTags: Type.Optional(GitTags),
          sortOrder: Type.Optional(ruled(Type.Integer(), 'sortOrder must be an integer')),
        },
        { additionalProperties: false },
      ),
      (value) => {
        if (!value || typeof value !== 'object' || Array.isArray(value)) return 'data is required: {name?, status?, gitTags?, sortOrder?}'
        const unknown = Object.keys(value).filter((k) => !ITERATION_FIELDS.includes(k))
        return `Unknown iteration fields: ${unknown.join(', ')}; valid: ${ITERATION_FIELDS.join(', ')}`
      },
    ),
  },
  'Rename an iteration, change its status, gitTags or sortOrder (PATCH).',
)
export const DeleteIterationBody = action(
  'deleteIteration',
  { projectId: ProjectId, iterationName: NodeId('iterationName is required') },
  'Delete an iteration; its jobs and tasks move to Later. Refused for system iterations.',
)
export const ReorderIterationsBody = action(
  'reorderIterations',
  { projectId: ProjectId, order: ruled(Type.Array(Type.String()), 'order is required: the full ordered list of iteration names') },
  'Set the display order: order lists every iteration of the project exactly once.',
)
const LeaseSeconds = ruled(
  Type.Integer({ minimum: 30, maximum: 86_400, description: 'how long the claim lasts unless renewed, 30 to 86400 seconds (default 900)' }),
  'leaseSeconds must be an integer from 30 to 86400',
)
export const PROJECT_ID_PATTERN = '^[a-z0-9][a-z0-9-]{1,62}$'
export const AddProjectBody = action(
  'addProject',
  {
    project: ruled(
      Type.Object({
        name: NonBlank('name is required: a non-empty string', 'at most 100 characters after trimming'),
        id: Type.Optional(
          ruled(
            Type.String({ pattern: PROJECT_ID_PATTERN, description: 'default: the name lowercased, whitespace runs as dashes' }),
            (id) =>
              typeof id !== 'string'
                ? 'project.id must be a string'
                : {
                    message: `Invalid project id "${id}": use 2 to 63 lowercase letters, digits and dashes, starting with a letter or digit`,
                    tip: 'Names with punctuation need an explicit project.id, for example "q3-plan".',
                  },
          ),
        ),
      }),
      { message: 'project is required: {name, id?}', tip: 'Send {action:"addProject", project:{name:"My plan", id:"my-plan"}}' },
    ),
  },
  'Create a project with its system iteration Later (Idempotency-Key is not honoured).',
)
export const RenameProjectBody = action(
  'renameProject',
  { projectId: ProjectId, name: NonBlank('name is required: a non-empty string', 'at most 100 characters after trimming') },
  'Rename a project (owner only); its id never changes.',
)

export const ClaimBody = action(
  'claim',
  {
    projectId: ProjectId,
    agent: ruled(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '\\S',
        description: 'who works on it, 1 to 100 characters (e.g. claude-code@laptop)',
      }),
      'agent is required: a name of 1 to 100 characters (e.g. claude-code@laptop)',
    ),
    nodeIds: Type.Optional(
      ruled(
        Type.Array(Type.String({ minLength: 1 }), {
          minItems: 1,
          maxItems: 100,
          description: 'claim exactly these work items, all or none',
        }),
        'nodeIds must be a non-empty array of node ids (at most 100)',
      ),
    ),
    count: Type.Optional(
      ruled(
        Type.Integer({ minimum: 1, maximum: 20, description: 'without nodeIds: claim up to this many ready items (default 1)' }),
        'count must be an integer from 1 to 20',
      ),
    ),
    leaseSeconds: Type.Optional(LeaseSeconds),
  },
  'Claim work items for an agent: the listed nodeIds (all or none), or up to count ready items in GET /ready order, one per approach first.',
)
export const RenewClaimBody = action(
  'renewClaim',
  {
    projectId: ProjectId,
    claimToken: ruled(Type.String({ minLength: 1, maxLength: 200 }), 'claimToken is required'),
    leaseSeconds: Type.Optional(LeaseSeconds),
  },
  'Extend a live claim by leaseSeconds from now.',
)
export const ReleaseClaimBody = action(
  'releaseClaim',
  { projectId: ProjectId, claimToken: ruled(Type.String({ minLength: 1, maxLength: 200 }), 'claimToken is required') },
  'End a live claim; the item is ready again for others.',
)

export type AddBody = Static<typeof AddBody>
export type UpdateBody = Static<typeof UpdateBody>
export type DeleteBody = Static<typeof DeleteBody>
export type RestoreBody = Static<typeof RestoreBody>
export type BatchBody = Static<typeof BatchBody>
export type BatchEntry = Static<typeof BatchEntry>
/** The node of an add, as its handler reads it (a batch's may carry an id). */
export interface NewNode {
  type: NodeType
  id?: string
  parentId?: string | null
  data: Record<string, any>
}
/** What the add handler reads: services and tests may call it without `action`. */
export type AddInput = { projectId: string; node: NewNode }
/** What an update names and changes, alone or in a batch. */
export type NodeUpdate = Pick<UpdateBody, 'nodeId' | 'data' | 'parentId'>
export type ClassifyBody = Static<typeof ClassifyBody>
export type NewIteration = Static<typeof NewIteration>
export type AddIterationBody = Static<typeof AddIterationBody>
export type UpdateIterationBody = Static<typeof UpdateIterationBody>
export type DeleteIterationBody = Static<typeof DeleteIterationBody>
export type ReorderIterationsBody = Static<typeof ReorderIterationsBody>
export type AddProjectBody = Static<typeof AddProjectBody>
export type RenameProjectBody = Static<typeof RenameProjectBody>
export type ClaimBody = Static<typeof ClaimBody>
export type RenewClaimBody = Static<typeof RenewClaimBody>
export type ReleaseClaimBody = Static<typeof ReleaseClaimBody>

/** Every action's body by name: what the mutate route and the MCP tool validate against. */
export const ACTION_BODIES = {
  add: AddBody,
  update: UpdateBody,
  delete: DeleteBody,
  restore: RestoreBody,
  batch: BatchBody,
  classify: ClassifyBody,
  addIteration: AddIterationBody,
  updateIteration: UpdateIterationBody,
  deleteIteration: DeleteIterationBody,
  reorderIterations: ReorderIterationsBody,
  addProject: AddProjectBody,
  renameProject: RenameProjectBody,
  claim: ClaimBody,
  renewClaim: RenewClaimBody,
  releaseClaim: ReleaseClaimBody,
} as const
export type ActionName = keyof typeof ACTION_BODIES

/** The body of POST /mutate: one of the fifteen actions, chosen by `action`. */
export const MutateBody = Type.Union(Object.values(ACTION_BODIES), {
  description: 'One action per call, chosen by action; project-scoped actions also need projectId.',
})

// ---- checking a body with the contract's messages ----

const compiled = new Map<TSchema, ReturnType<typeof TypeCompiler.Compile>>()
const checkerOf = (schema: TSchema) => {
  let c = compiled.get(schema)
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)))
  return c
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

type Fallback = (() => Error) | null

function refusalOf(schema: TSchema, value: unknown, path: string, fallback: Fallback = null): Error {
  const rule = (schema as any)[RULE] as Rule | undefined
  if (rule === undefined && fallback) return fallback()
  const refusal: Refusal =
    rule === undefined
      ? value === undefined
        ? `${path || 'body'} is required`
        : `${path || 'body'}: ${[...Value.Errors(schema, value)][0]?.message ?? 'invalid value'}`
      : typeof rule === 'function'
        ? rule(value)
        : rule
  if (refusal instanceof Error) return refusal
  if (typeof refusal === 'string') return new ErrorListError([refusal])
  return new ErrorListError([refusal.message], refusal.tip ? { _tip: refusal.tip } : {})
}

/** The first broken part of `value`, in the order of the schema's properties, or null. */
function firstRefusal(schema: TSchema, value: unknown, path: string, fallback: Fallback = null): Error | null {
  const s = schema as any
  // a part without a message of its own is refused with the message of the nearest part that has one
  const inner: Fallback = s[RULE] !== undefined ? () => refusalOf(schema, value, path) : fallback
  if (s[DEFERRED]) {
    // the node rules check what is inside; only a missing or wrongly shaped value is refused here
    const shaped = value !== undefined && (s.type !== 'object' || isObject(value))
    return shaped || s[RULE] === undefined ? null : refusalOf(schema, value, path, fallback)
  }
  if (Value.Check(schema, value as any)) return null
  if (s[DISCRIMINATOR]) {
    const key = s[DISCRIMINATOR] as string
    const variant = isObject(value) ? (s.anyOf as any[]).find((v) => v.properties[key]?.const === value[key]) : undefined
    return variant ? firstRefusal(variant, value, path, fallback) : refusalOf(schema, value, path, fallback)
  }
  if (s.anyOf) {
    if (isObject(value) && (s.anyOf as any[]).some((v) => v[DEFERRED] && v.type === 'object')) return null
    return refusalOf(schema, value, path, fallback)
  }
  if (s.type === 'object' && s.properties) {
    if (!isObject(value)) return refusalOf(schema, value, path, fallback)
    for (const [name, property] of Object.entries<TSchema>(s.properties)) {
      const at = path ? `${path}.${name}` : name
      const present = Object.hasOwn(value, name) && value[name] !== undefined
      if (!present && !s.required?.includes(name)) continue
      const found = firstRefusal(property, present ? value[name] : undefined, at, inner)
      if (found) return found
    }
    if (s.additionalProperties === false && Object.keys(value).some((k) => !Object.hasOwn(s.properties, k)))
      return refusalOf(schema, value, path, fallback)
    return null
  }
  if (s.type === 'array' && s.items) {
    const list = value as unknown[]
    if (
      !Array.isArray(list) ||
      (s.minItems !== undefined && list.length < s.minItems) ||
      (s.maxItems !== undefined && list.length > s.maxItems)
    )
      return refusalOf(schema, value, path, fallback)
    for (let i = 0; i < list.length; i++) {
      const found = firstRefusal(s.items, list[i], `${path}[${i}]`, s[PREFIX_ITEMS] ? null : inner)
      if (!found) continue
      if (s[PREFIX_ITEMS] && found instanceof ErrorListError)
        return new ErrorListError(
          found.errors.map((e) => `${s[PREFIX_ITEMS]}[${i}]: ${e}`),
          found.meta,
          found.status,
        )
      return found
    }
    return s.uniqueItems ? refusalOf(schema, value, path, fallback) : null
  }
  return refusalOf(schema, value, path, fallback)
}

/**
 * `body` as the typed body of `schema`, or the refusal api.md gives for its first broken part
 * (thrown: a ErrorListError, or the 403 of a missing projectId). Deferred parts pass through
 * unchecked to the node rules.
 */
export function parseAction<S extends TSchema>(schema: S, body: unknown): Static<S> {
  if (checkerOf(schema).Check(body)) return body as Static<S>
  const refusal = firstRefusal(schema, body, '')
  if (refusal) throw refusal
  return body as Static<S>
}

// ---- what each action answers (200) ----

const Meta = Type.Optional(Type.Object({}, { additionalProperties: true, description: '_tip, advisory, focus' }))
const NodeOut = Type.Object({
  id: Type.String(),
  type: Type.Union(NODE_TYPES.map((t) => Type.Literal(t))),
  parentId: Type.Union([Type.String(), Type.Null()]),
  data: Type.Object({ label: Type.String() }, { additionalProperties: true }),
})
const IterationOut = Type.Object({
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('done')]),
  system: Type.Boolean(),
  sortOrder: Type.Integer(),
  gitTags: Type.Array(Type.String()),
  completedAt: Type.Union([Type.Number({ description: 'milliseconds since the epoch' }), Type.Null()]),
})
const ClaimOut = Type.Object({
  nodeId: Type.String(),
  agent: Type.String(),
  claimToken: Type.String({ description: 'secret: send it with your writes of this node, renewClaim and releaseClaim' }),
  expiresAt: Type.String({ description: 'ISO 8601 UTC' }),
})
const ok = <P extends Record<string, TSchema>>(title: string, properties: P) =>
  Type.Object({ success: Type.Literal(true), ...properties, _meta: Meta }, { title })

/** The 200 body of POST /mutate: the result of the action sent. */
export const MutateResult = Type.Union(
  [
    ok('add, update, restore, classify', { node: NodeOut }),
    ok('delete', {
      deleted: Type.Object({ id: Type.String(), type: Type.String() }),
      orphanedChildren: Type.Array(Type.String(), { description: 'the direct children, deleted with it' }),
      changelogId: Type.Integer(),
    }),
    ok('batch', {
      results: Type.Array(Type.Object({ action: Type.String() }, { additionalProperties: true }), {
        description: 'one per entry, in order',
      }),
      idMap: Type.Record(Type.String(), Type.String(), { description: 'draft- id → real id' }),
    }),
    ok('addIteration, updateIteration', { iteration: IterationOut }),
    ok('deleteIteration', { deleted: Type.Object({ name: Type.String() }), movedToLater: Type.Array(Type.String()) }),
    ok('reorderIterations', { iterations: Type.Array(IterationOut) }),
    ok('addProject', {
      project: Type.Object({ id: Type.String(), name: Type.String() }),
      iterations: Type.Array(
        Type.Object({ name: Type.String(), status: Type.String(), system: Type.Boolean() }, { additionalProperties: true }),
      ),
    }),
    ok('renameProject', { project: Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: true }) }),
    ok('claim', { claims: Type.Array(ClaimOut, { description: 'empty when nothing was ready' }) }),
    ok('renewClaim', { claim: ClaimOut }),
    ok('releaseClaim', { released: Type.Object({ nodeId: Type.String() }) }),
  ],
  { description: 'The result of the action sent.' },
)
