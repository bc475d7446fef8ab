import { expect } from 'bun:test'
import fc from 'fast-check'
import { ACTION_BODIES } from '../src/mutate/model'
import { FIELDS, fieldsOf, type NodeType } from '../src/ports/node-data'
import type { Res } from './helpers'

// Issue 50, 1: the writes of test/reads-cache.property.test.ts (in process) and
// test/process.reads-property.test.ts (two server processes): every action of POST /mutate with
// every one of its fields (and every field of a node's data), each followed by every cached read
// of every replica, compared with what that replica answers without a cache.

/** A server that answers from its read cache, and what it would answer without one. */
export interface Replica {
  name: string
  call: (method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }) => Promise<Res>
  uncached: (path: string) => Promise<Res>
}

/** A write: its picks, and whether it goes to the last replica (else the first). */
export type WritePick = Pick & { onB: boolean }

/** Every cached read of the project (docs/caching.md), in the variants agents use. */
const cachedReads = (p: string, token: string) => [
  `/api/v1/nodes?projectId=${p}`,
  `/api/v1/nodes?projectId=${p}&type=job`,
  `/api/v1/nodes?projectId=${p}&iteration=S1`,
  `/api/v1/tree?projectId=${p}&nodeId=goal-1&direction=down`,
  `/api/v1/tree?projectId=${p}&nodeId=job-1&direction=up`,
  `/api/v1/tree?projectId=${p}&nodeId=job-1&direction=context`,
  `/api/v1/tree?projectId=${p}&format=outline`,
  `/api/v1/outline?projectId=${p}`,
  `/api/v1/iterations?projectId=${p}`,
  `/api/v1/iterations?projectId=${p}&current=true`,
  `/api/v1/iterations?projectId=${p}&status=active`,
  `/api/v1/iterations?projectId=${p}&status=done`,
  `/api/v1/search?projectId=${p}&q=survey&mode=keyword`,
  `/api/v1/export-okf?projectId=${p}`,
  `/api/v1/public/share/${token}`,
  `/s/${token}`,
]

/** The export's index.md carries the time it was made; everything else is compared whole. */
const comparable = (res: Res) => {
  let body = res.body?.files ? { ...res.body, files: { ...res.body.files, 'index.md': undefined } } : res.body
  // how far this process's own index has embedded the nodes is no answer of the project's
  const search = body?._meta?.search
  if (search) body = { ...body, _meta: { ...body._meta, search: { ...search, pendingNodes: undefined, etaSeconds: undefined } } }
  return JSON.stringify({ status: res.status, body })
}

/**
 * Reads every cached read on every replica and compares each with what it answers without a
 * cache; the names of the reads that differ (none, when every write reached every cache).
 */
async function readAll(replicas: Replica[], p: string, token: string, after: string): Promise<string[]> {
  const stale: string[] = []
  // replicas that share one `uncached` (a third process that keeps nothing) are compared with one
  // answer of it per read: it says the same to both
  const asked = new Map<Replica['uncached'], Map<string, string>>()
  for (const replica of replicas)
    for (const path of cachedReads(p, token)) {
      // the uncached answer before and after the cached one: a server's own loops (the classifier)
      // may write in between, and the cached answer must then be one of the two
      const known = asked.get(replica.uncached) ?? asked.set(replica.uncached, new Map()).get(replica.uncached)!
      const before = known.get(path) ?? comparable(await replica.uncached(path))
      known.set(path, before)
      const cached = comparable(await replica.call('GET', path))
      if (cached === before || cached === comparable(await replica.uncached(path))) continue
      stale.push(`after ${after}: ${replica.name} ${path} answered ${cached.slice(0, 300)}, not ${before.slice(0, 300)}`)
    }
  return stale
}

// ---- the writes ----

interface State {
  p: string
  nodes: { id: string; type: NodeType; parentId: string | null }[]
  deleted: string[]
  iterations: string[]
  claimTokens: { token: string; nodeId: string }[]
  changeIds: string[]
  /** node id or iteration name → its rev as last read (live.md §1: a write may be based on it) */
  revs: Map<string, string>
  /** the open proposals' ids, newest last (live.md §5) */
  proposals: string[]
}

/** The picks one write is made of: which fields it carries (`mask`), which ids and values (`n`, `text`). */
export interface Pick {
  action: string
  mask: number
  n: number[]
  text: string
  /** add: the type of the node; update: the type of the node it changes (else one chosen by n) */
  type?: NodeType
}

const PARENT: Record<NodeType, NodeType | null> = { goal: null, need: 'goal', approach: 'need', job: 'approach', task: null }
export const TYPES: NodeType[] = ['goal', 'need', 'approach', 'job', 'task']
const bit = (pick: Pick, i: number) => (pick.mask & (1 << i)) !== 0
const at = <T>(list: T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined)

/** A value for node field `name` (most of them valid, so that the write goes through). */
function fieldValue(name: string, s: State, pick: Pick, k: number): unknown {
  const n = pick.n[k % pick.n.length]!
  const of = (type: NodeType) => s.nodes.filter((x) => x.type === type).map((x) => x.id)
  switch (name) {
    case 'label':
      return `survey ${pick.text}`.slice(0, 200)
    case 'description':
    case 'notes':
    case 'measure':
      return `${name} ${pick.text}`
    case 'iteration':
      return at(s.iterations, n) ?? 'S1'
    case 'status':
      return at(['done', 'open'], n)
    case 'maturity':
      return at(['mvp', 'releasable'], n)
    case 'kano':
      return at(['must-have', 'incremental', 'delighter'], n)
    case 'size':
      return at(['skateboard', 'car', 'truck'], n)
    case 'approachStatus':
      return at(['development', 'validation', 'resolved', 'retired'], n)
    case 'goalStatus':
      return at(['focus', 'later', 'done'], n)
    case 'blockedBy':
      return of('approach').slice(0, n % 3)
    case 'serves':
      return of('need').slice(0, n % 2)
    case 'externalRefs':
      return [{ system: 'jira', key: `K-${n % 100}`, url: `https://jira.example/K-${n % 100}` }]
    case 'demand':
      return [{ who: `Customer ${pick.text}`.trim(), at: '2026-01-15', revenue: n % 1000 }]
    case 'kind':
      return at(['memo', 'do-it'], n)
    case 'urgent':
      return n % 2 === 0
    case 'completedAt':
      return '2026-02-01T10:00:00Z'
    default:
      throw new Error(`the test has no value for the node field ${name}: add one`)
  }
}

function nodeData(type: NodeType, s: State, pick: Pick, update: boolean): Record<string, unknown> {
  const data: Record<string, unknown> = {}
  fieldsOf(type).forEach((name, i) => {
    if (name === 'label' && !update) data.label = fieldValue(name, s, pick, i)
    else if (bit(pick, i + 4)) data[name] = fieldValue(name, s, pick, i)
  })
  // urgent is valid only on a do-it task
  if (data.urgent !== undefined && update) data.kind = 'do-it'
  return data
}

/** The body of one write, made from `pick` against the project as it stands. */
function bodyOf(pick: Pick, s: State): Record<string, unknown> {
  const [n0 = 0, n1 = 0, n2 = 0] = pick.n
  const p = s.p
  const live = s.nodes
  const claimed = bit(pick, 2) ? s.claimTokens.at(-1) : undefined
  const node = (claimed && live.find((x) => x.id === claimed.nodeId)) ?? at(pick.type ? live.filter((x) => x.type === pick.type) : live, n0)
  const token = claimed?.token ?? at(s.claimTokens, n1)?.token
  const parentFor = (type: NodeType) => {
    const t = PARENT[type]
    return t
      ? at(
          live.filter((x) => x.type === t).map((x) => x.id),
          n1,
        )
      : undefined
  }
  const addNode = () => {
    const type = pick.type ?? TYPES[n0 % TYPES.length]!
    const parentId = parentFor(type)
    return { type, ...(parentId ? { parentId } : {}), data: nodeData(type, s, pick, false) }
  }
  // bit 20: the write says the rev it is based on (the one just read: it goes through)
  const ifRev = (key: string | undefined) => (bit(pick, 20) && key && s.revs.has(key) ? { ifRev: s.revs.get(key) } : {})
  const updateOf = (x: State['nodes'][number]) => ({
    nodeId: x.id,
    ...ifRev(x.id),
    ...(bit(pick, 21) ? { force: true } : {}),
    ...(bit(pick, 0) || pick.mask >> 4 !== 0 ? { data: nodeData(x.type, s, pick, true) } : {}),
    ...(bit(pick, 1) && PARENT[x.type] ? { parentId: parentFor(x.type) ?? null } : {}),
    ...(claimed && claimed.nodeId === x.id ? { claimToken: claimed.token } : {}),
  })
  switch (pick.action) {
    case 'add':
      return { action: 'add', projectId: p, node: addNode() }
    case 'update':
      return { action: 'update', projectId: p, ...(node ? updateOf(node) : { nodeId: 'job-1' }) }
    case 'delete':
      return {
        action: 'delete',
        projectId: p,
        nodeId: node?.id ?? 'job-1',
        ...ifRev(node?.id),
        ...(claimed && claimed.nodeId === node?.id ? { claimToken: claimed.token } : {}),
      }
    case 'restore':
      // changelogId is filled in by run() (it reads GET /changelog)
      return { action: 'restore', projectId: p, nodeId: s.deleted.at(-1 - (n0 % 2)) ?? s.deleted.at(-1) ?? 'job-1' }
    case 'batch':
      return {
        action: 'batch',
        projectId: p,
        mutations: [
          { action: 'add', node: addNode() },
          ...(node && bit(pick, 0) ? [{ action: 'update', ...updateOf(node) }] : []),
          ...(bit(pick, 1) ? [{ action: 'addIteration', iteration: { name: `B${n2 % 50}` } }] : []),
          ...(node && bit(pick, 3) ? [{ action: 'delete', nodeId: at(live, n2)!.id }] : []),
        ],
      }
    case 'classify':
      return {
        action: 'classify',
        projectId: p,
        nodeId:
          at(
            live.filter((x) => x.type === 'task').map((x) => x.id),
            n0,
          ) ?? 'task-1',
      }
    case 'addIteration':
      return {
        action: 'addIteration',
        projectId: p,
        iteration: {
          name: `It ${n0 % 100}`,
          ...(bit(pick, 0) ? { status: at(['active', 'done'], n1) } : {}),
          ...(bit(pick, 1) ? { gitTags: [`v${n2 % 10}`] } : {}),
        },
      }
    case 'updateIteration': {
      const data: Record<string, unknown> = {}
      if (bit(pick, 0)) data.name = `It ${n1 % 100}`
      if (bit(pick, 1)) data.status = at(['active', 'done'], n1)
      if (bit(pick, 2)) data.gitTags = n2 % 3 === 0 ? [] : [`v${n2 % 10}`, `${pick.text}x`.trim()].filter((t) => t.length > 0)
      if (bit(pick, 3)) data.sortOrder = n2 % 7
      const iterationName = at(s.iterations, n0) ?? 'S1'
      return { action: 'updateIteration', projectId: p, iterationName, data, ...ifRev(`iteration:${iterationName}`) }
    }
    case 'deleteIteration': {
      const iterationName = at(s.iterations, n0) ?? 'S1'
      return { action: 'deleteIteration', projectId: p, iterationName, ...ifRev(`iteration:${iterationName}`) }
    }
    case 'propose':
      return {
        action: 'propose',
        projectId: p,
        title: `Proposal ${pick.text}`.trim(),
        ...(bit(pick, 0) ? { note: `why ${pick.text}` } : {}),
        mutations: [{ action: 'add', node: addNode() }, ...(node && bit(pick, 1) ? [{ action: 'update', ...updateOf(node) }] : [])],
      }
    case 'applyProposal':
      return {
        action: 'applyProposal',
        projectId: p,
        proposalId: at(s.proposals, n0) ?? 'prp_none',
        ...(bit(pick, 0) ? { force: true } : {}),
      }
    case 'rejectProposal':
      return {
        action: 'rejectProposal',
        projectId: p,
        proposalId: at(s.proposals, n0) ?? 'prp_none',
        ...(bit(pick, 0) ? { reason: `no ${pick.text}` } : {}),
      }
    case 'withdrawProposal':
      return { action: 'withdrawProposal', projectId: p, proposalId: at(s.proposals, n0) ?? 'prp_none' }
    case 'reorderIterations': {
      const order = [...s.iterations]
      for (let i = order.length - 1; i > 0; i--) {
        const j = (n0 + i * n1) % (i + 1)
        ;[order[i], order[j]] = [order[j]!, order[i]!]
      }
      return { action: 'reorderIterations', projectId: p, order }
    }
    case 'addProject':
      return { action: 'addProject', project: { name: `Other ${n0}`, ...(bit(pick, 0) ? { id: `other-${n0}-${n1}` } : {}) } }
    case 'renameProject':
      return { action: 'renameProject', projectId: p, name: `Plan ${pick.text}`.trim() }
    case 'claim':
      return {
        action: 'claim',
        projectId: p,
        agent: `agent-${n0 % 5}`,
        ...(bit(pick, 0)
          ? {
              nodeIds: live
                .filter((x) => x.type === 'job' || x.type === 'task')
                .map((x) => x.id)
                .slice(n1 % 3, (n1 % 3) + 1),
            }
          : bit(pick, 1)
            ? { count: 1 + (n1 % 3) }
            : {}),
        ...(bit(pick, 2) ? { leaseSeconds: 60 + (n2 % 600) } : {}),
      }
    case 'renewClaim':
      return {
        action: 'renewClaim',
        projectId: p,
        claimToken: token ?? 'none',
        ...(bit(pick, 0) ? { leaseSeconds: 120 + (n2 % 600) } : {}),
      }
    case 'releaseClaim':
      return { action: 'releaseClaim', projectId: p, claimToken: token ?? 'none' }
    case 'revert': {
      const changeIds = s.changeIds.slice(-(1 + (n0 % 2)))
      return {
        action: 'revert',
        projectId: p,
        ...(bit(pick, 0) || changeIds.length === 0 ? { filter: { since: new Date(Date.now() - 1000).toISOString() } } : { changeIds }),
        ...(bit(pick, 1) ? { dryRun: n1 % 2 === 0 } : {}),
        ...(bit(pick, 2) ? { force: true } : {}),
      }
    }
    default:
      throw new Error(`the test has no write for the action ${pick.action}: add one`)
  }
}

/** `path.field` of every field `body` carries (the node's data fields as `node.data.x`), for the coverage check. */
function fieldsIn(body: Record<string, unknown>): string[] {
  const out: string[] = []
  const action = String(body.action)
  for (const [k, v] of Object.entries(body)) {
    if (k === 'action' || k === 'projectId') continue
    out.push(`${action}.${k}`)
    const data = k === 'data' ? v : k === 'node' ? (v as { data?: unknown }).data : undefined
    if (data && typeof data === 'object' && (action === 'add' || action === 'update'))
      for (const f of Object.keys(data)) out.push(`${action}.data.${f}`)
    if (action === 'updateIteration' && k === 'data') for (const f of Object.keys(v as object)) out.push(`${action}.data.${f}`)
    if (action === 'addIteration' && k === 'iteration') for (const f of Object.keys(v as object)) out.push(`${action}.iteration.${f}`)
    if (action === 'batch' && k === 'mutations') for (const m of v as { action: string }[]) out.push(`batch.${m.action}`)
  }
  return out
}

async function newProject(a: Replica): Promise<{ s: State; token: string }> {
  const p = `reads-${crypto.randomUUID().slice(0, 8)}`
  expect((await a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: p, id: p } } })).status).toBe(200)
  const seed = await a.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'addIteration', iteration: { name: 'S1' } },
        { action: 'addIteration', iteration: { name: 'S2', gitTags: ['v0'] } },
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Grow revenue' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Churn is high' } } },
        { action: 'add', node: { id: 'draft-n2', type: 'need', parentId: 'draft-g', data: { label: 'Onboarding is slow' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Exit survey' } } },
        { action: 'add', node: { id: 'draft-a2', type: 'approach', parentId: 'draft-n2', data: { label: 'Guided tour' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'Write the survey', iteration: 'S1' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a2', data: { label: 'Draft the tour', iteration: 'S2' } } },
        { action: 'add', node: { type: 'task', data: { label: 'Fix the survey link' } } },
      ],
    },
  })
  expect(seed.status).toBe(200)
  const share = await a.call('POST', '/api/v1/share', { body: { projectId: p } })
  expect(share.status).toBe(201)
  return {
    s: { p, nodes: [], deleted: [], iterations: [], claimTokens: [], changeIds: [], revs: new Map(), proposals: [] },
    token: share.body.token,
  }
}

/** The project as it stands (read without the cache), into `s`. */
async function refresh(a: Replica, s: State): Promise<void> {
  const nodes = await a.uncached(`/api/v1/nodes?projectId=${s.p}`)
  s.nodes = nodes.body.nodes.map((x: any) => ({ id: x.id, type: x.type, parentId: x.parentId }))
  const its = await a.uncached(`/api/v1/iterations?projectId=${s.p}`)
  s.iterations = its.body.iterations.map((i: any) => i.name)
  s.revs = new Map([
    ...nodes.body.nodes.map((x: any): [string, string] => [x.id, x.rev]),
    ...its.body.iterations.map((i: any): [string, string] => [`iteration:${i.name}`, i.rev]),
  ])
}

/**
 * The shape of a write: its action, the fields it carries at every depth (an array by its first
 * element), its booleans, the node types it names and the replica it goes to; ids, names, numbers
 * and the other strings left out. A cached answer is kept for a project revision, whatever field
 * a write changed (src/reads/cache.ts): what could leave one stale is a write path that does not
 * advance the revision, and a second write of a shape takes the path of the first. The sweep of
 * each field one at a time (24 masks per action, most naming fields the action does not have)
 * made some 560 writes; written once a shape, some 200 (a refused write's shape is tried again).
 */
function shapeOf(body: Record<string, unknown>, s: State, onB: boolean): string {
  const of = (v: unknown, key: string): unknown => {
    if (Array.isArray(v)) return v.length ? [of(v[0], key)] : []
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, of(x, k)]))
    return key === 'action' || key === 'type' || typeof v === 'boolean' ? v : typeof v
  }
  const changed = typeof body.nodeId === 'string' ? s.nodes.find((x) => x.id === body.nodeId)?.type : undefined
  return JSON.stringify([of(body, ''), changed, onB])
}

/**
 * Runs `picks` one after another in a new project, each write on the first replica or (onB) the
 * last, each followed by every cached read of every replica; returns the stale answers (none
 * expected) and adds to `covered` the fields of every write that went through.
 */
export async function run(
  replicas: Replica[],
  picks: WritePick[],
  covered: Set<string>,
  opts: { onceEachShape?: boolean } = {},
): Promise<string[]> {
  const a = replicas[0]!
  const b = replicas.at(-1)!
  const { s, token } = await newProject(a)
  await refresh(a, s)
  expect(await readAll(replicas, s.p, token, 'the seed')).toEqual([])
  const stale: string[] = []
  /** with onceEachShape: the shapes of the writes that went through (a write of one of them again is left out) */
  const written = new Set<string>()
  for (const pick of picks) {
    // closing a proposal needs an open one: proposed first when none is left
    if (pick.action.endsWith('Proposal') && s.proposals.length === 0) {
      const made = await a.call('POST', '/api/v1/mutate', {
        body: {
          action: 'propose',
          projectId: s.p,
          title: 'Spare',
          mutations: [{ action: 'add', node: { type: 'task', data: { label: 'survey spare' } } }],
        },
      })
      expect(made.status).toBe(200)
      s.proposals.push(String(made.body.proposal.proposalId))
    }
    const body = bodyOf(pick, s)
    if (bit(pick, 23)) body.idempotencyKey = `idem-${crypto.randomUUID()}`
    if (pick.action === 'restore' && bit(pick, 0)) {
      const log = await a.call('GET', `/api/v1/changelog?projectId=${s.p}`)
      const entry = (log.body.changelog ?? []).find((e: { nodeId: string }) => e.nodeId === body.nodeId)
      if (entry) {
        delete body.nodeId
        body.changelogId = entry.id
      }
    }
    const shape = opts.onceEachShape ? shapeOf(body, s, pick.onB) : ''
    if (shape && written.has(shape)) continue
    const writer = pick.onB ? b : a
    const res = await writer.call('POST', '/api/v1/mutate', { body, headers: { prefer: 'change-ids' } })
    // a client's write never answers 500 (but the one api.md documents: a restore under a missing parent)
    const documented = body.action === 'restore' && res.body?.errors?.[0] === 'Failed to restore node'
    if (res.status >= 500 && !documented) throw new Error(`${JSON.stringify(body)} answered ${res.status} ${JSON.stringify(res.body)}`)
    if (res.status === 200) {
      if (shape) written.add(shape)
      for (const f of fieldsIn(body)) covered.add(f)
      for (const id of res.body.changeIds ?? []) s.changeIds.push(String(id))
      for (const c of res.body.claims ?? []) s.claimTokens.push({ token: c.claimToken, nodeId: c.nodeId })
      if (body.action === 'delete') s.deleted.push(String(body.nodeId))
      if (body.action === 'restore') s.deleted = s.deleted.filter((id) => id !== (body.nodeId ?? res.body.node?.id))
      if (body.action === 'releaseClaim') s.claimTokens = s.claimTokens.filter((c) => c.token !== body.claimToken)
      if (body.action === 'propose') s.proposals.push(String(res.body.proposal.proposalId))
      else if (body.proposalId) s.proposals = s.proposals.filter((id) => id !== body.proposalId)
    } else if (process.env.DEBUG_PICKS) console.log(res.status, JSON.stringify(body).slice(0, 300), JSON.stringify(res.body).slice(0, 300))
    await refresh(a, s)
    stale.push(...(await readAll(replicas, s.p, token, `${body.action} ${JSON.stringify(body).slice(0, 200)} (${res.status})`)))
    if (stale.length) break
  }
  return stale
}

export const ACTIONS = Object.keys(ACTION_BODIES)
/** A random write of `action` (fast-check). */
export const pickOf = (action: string): fc.Arbitrary<WritePick> =>
  fc.record({
    action: fc.constant(action),
    mask: fc.nat({ max: 2 ** 24 - 1 }),
    n: fc.array(fc.nat({ max: 1000 }), { minLength: 8, maxLength: 8 }),
    text: fc.string({ maxLength: 12 }),
    onB: fc.boolean(),
  })

/** Each action with each of its fields, one at a time; every node field on every type; a claimed node's update and delete. */
export function sweep(): WritePick[] {
  const picks: (Pick & { onB: boolean })[] = []
  let k = 0
  const n = () => [k, k + 1, k + 2, 3, 4, 5, 6, 7]
  for (const action of ACTIONS)
    for (let i = 23; i >= 0; i--) {
      // (deleting a goal would take most of the plan with it)
      const type: NodeType | undefined = action === 'delete' ? (k % 2 ? 'job' : 'task') : undefined
      picks.push({ action, mask: 1 << i, n: n(), text: `t${k}`, onB: k++ % 2 === 1, ...(type ? { type } : {}) })
    }
  // every field of a node's data, on every type it is valid on, added and updated (a claimed one too)
  for (const type of TYPES)
    fieldsOf(type).forEach((_, i) => {
      picks.push({ action: 'add', type, mask: 1 << (i + 4), n: n(), text: `a${k}`, onB: k++ % 2 === 1 })
      picks.push({ action: 'update', type, mask: 1 << (i + 4), n: n(), text: `u${k}`, onB: k++ % 2 === 1 })
    })
  picks.push({ action: 'claim', mask: 1, n: [0, 0, 0, 0, 0, 0, 0, 0], text: '', onB: false })
  picks.push({ action: 'update', mask: (1 << 2) | (1 << 4), n: n(), text: `c${k}`, onB: k++ % 2 === 1 })
  picks.push({ action: 'delete', mask: 1 << 2, n: [0, 0, 0, 0, 0, 0, 0, 0], text: '', onB: true })
  // and each action with every field at once
  for (const action of ACTIONS)
    picks.push({ action, mask: 2 ** 24 - 1, n: [k, k + 1, k + 2, 3, 4, 5, 6, 7], text: `all${k}`, onB: k++ % 2 === 1 })
  // the case of the issue: a gitTags-only update of an iteration just read
  picks.unshift({ action: 'updateIteration', mask: 1 << 2, n: [0, 0, 1, 0, 0, 0, 0, 0], text: 'v1', onB: false })
  return picks
}

/** `action.field` of every field of ACTION_BODIES (and of a node's data, an iteration's) that a write can carry. */
export function expectedFields(): string[] {
  const expected: string[] = []
  for (const [action, schema] of Object.entries(ACTION_BODIES))
    for (const k of Object.keys((schema as { properties: Record<string, unknown> }).properties))
      if (k !== 'action' && k !== 'projectId') expected.push(`${action}.${k}`)
  // completedAt is the service's to set; kind is the classifier's on creation, and so urgent (only on a do-it task)
  for (const f of Object.keys(FIELDS)) {
    if (f !== 'completedAt') expected.push(`update.data.${f}`)
    if (f !== 'completedAt' && f !== 'kind' && f !== 'urgent') expected.push(`add.data.${f}`)
  }
  for (const f of ['name', 'status', 'gitTags', 'sortOrder']) expected.push(`updateIteration.data.${f}`)
  for (const f of ['status', 'gitTags']) expected.push(`addIteration.iteration.${f}`)
  for (const m of ['add', 'update', 'delete', 'addIteration']) expected.push(`batch.${m}`)
  return expected
}
