import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

/**
 * A node's `data` is checked with the rest of a POST /mutate body, at one point (src/mutate/check.ts
 * `checkedAction`, docs/validation.md), against the schema of the node's type, the type read from
 * the body: an add's `node.type`, an update's id (`<type>-<n>`), a batch's update of a draft- id
 * from the add that sent that id in the same batch; a proposal's entries as a batch's. Seen from
 * outside, through the real server process:
 * (a) a key that may not write there hears 403 (a stranger's project_access_denied, a read-only
 *     key's key_scope) whatever is wrong with the data;
 * (b) a key that may hears 400 with api.md's message, a batch's and a proposal's naming the entry;
 * (c) nothing of a refused write is stored, and no proposal.
 * Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */
let server: ServerProcess
let stranger: string
let readKey: string
const P = 'data-check'
const SEEDED = ['goal-1', 'need-1', 'approach-1']

const send = (body: Record<string, unknown>, key?: string) =>
  server.call('POST', '/api/v1/mutate', { key, body: { projectId: P, ...body } })

beforeAll(async () => {
  server = await startServer()
  const made = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { id: P, name: 'Data' } } })
  expect(made.status).toBe(200)
  // a goal, a need under it, an approach under that: each added alone, under the id the one before got
  const seeded: string[] = []
  for (const type of ['goal', 'need', 'approach']) {
    const node = { type, data: { label: type.toUpperCase() }, ...(seeded.length ? { parentId: seeded.at(-1) } : {}) }
    seeded.push((await send({ action: 'add', node })).body.node.id)
  }
  expect(seeded).toEqual(SEEDED)
  stranger = (await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'eve', tier: 'team' } })).body.apiKey
  readKey = (await server.call('POST', '/api/v1/keys', { body: { label: 'reader', scope: { role: 'read' } } })).body.apiKey
}, 60_000)
afterAll(() => server?.close())

const ENUM_SIZE = 'size must be one of: skateboard, vespa, car, truck, antonov'
const DEMAND_TIP =
  'demand is an array of at most 25 {who, at, revenue?, size?, source?, ask?}; who a non-empty string, at a YYYY-MM-DD date, revenue a number >= 0'

/** A body with bad data, and the 400 a key that may write hears: its `errors`, and its `_tip` when it has one. */
const CASES: { row: string; body: Record<string, unknown>; errors: string[]; tip?: string }[] = [
  {
    row: 'add: a field on the wrong type',
    body: { action: 'add', node: { type: 'goal', data: { label: 'G2', kano: 'delighter' } } },
    errors: ['kano is not valid on a goal; it is valid on: approach'],
  },
  {
    row: 'add: a value the field does not allow',
    body: { action: 'add', node: { type: 'approach', parentId: 'need-1', data: { label: 'A2', size: 'huge' } } },
    errors: [ENUM_SIZE],
  },
  {
    row: 'add: bad data under a parent that does not exist (the data, checked with the body, first)',
    body: { action: 'add', node: { type: 'need', parentId: 'goal-99', data: { label: ' ' } } },
    errors: ['label is required: a non-empty string'],
  },
  {
    row: 'update: a value the field does not allow, the type read from the id',
    body: { action: 'update', nodeId: 'approach-1', data: { kano: 'sideways' } },
    errors: ['kano must be one of: must-have, incremental, performance, delighter'],
  },
  {
    row: 'update: a field on the wrong type, the type read from the id',
    body: { action: 'update', nodeId: 'goal-1', data: { maturity: 'mvp' } },
    errors: ['maturity is not valid on a goal; it is valid on: job'],
  },
  {
    row: 'batch: an update entry’s bad data, named by its index',
    body: {
      action: 'batch',
      mutations: [
        { action: 'add', node: { type: 'goal', data: { label: 'fine' } } },
        { action: 'update', nodeId: 'need-1', data: { demand: 'lots' } },
      ],
    },
    errors: ['mutations[1]: demand must be an array'],
    tip: DEMAND_TIP,
  },
  {
    row: 'batch: an add entry’s bad data after an entry whose parent does not exist',
    body: {
      action: 'batch',
      mutations: [
        { action: 'add', node: { type: 'need', parentId: 'goal-99', data: { label: 'orphan' } } },
        { action: 'add', node: { type: 'task', data: { label: 't', urgent: 'yes' } } },
      ],
    },
    errors: ['mutations[1]: urgent must be true or false'],
  },
  {
    row: 'batch: an update of a draft, checked as the type its add sent',
    body: {
      action: 'batch',
      mutations: [
        { action: 'add', node: { id: 'draft-x', type: 'goal', data: { label: 'X' } } },
        { action: 'update', nodeId: 'draft-x', data: { kano: 'delighter' } },
      ],
    },
    errors: ['mutations[1]: kano is not valid on a goal; it is valid on: approach'],
  },
  {
    row: 'propose: an entry’s bad data, named by its index, as a batch’s',
    body: {
      action: 'propose',
      title: 'More bets',
      mutations: [
        { action: 'add', node: { type: 'approach', parentId: 'need-1', data: { label: 'B' } } },
        { action: 'update', nodeId: 'approach-1', data: { size: 'huge' } },
      ],
    },
    errors: [`mutations[1]: ${ENUM_SIZE}`],
  },
]

describe('a node’s data, checked with the body', () => {
  it('answers a key that may not write there 403, whatever is wrong with the data', async () => {
    const seen: unknown[] = []
    for (const c of CASES) {
      const [asStranger, asReader] = [await send(c.body, stranger), await send(c.body, readKey)]
      seen.push({ row: c.row, stranger: [asStranger.status, asStranger.body.error], reader: [asReader.status, asReader.body.error] })
    }
    expect(seen).toEqual(CASES.map((c) => ({ row: c.row, stranger: [403, 'project_access_denied'], reader: [403, 'key_scope'] })))
  })

  it('answers a key that may write there 400 with the contract’s message, a batch’s and a proposal’s naming the entry', async () => {
    const seen: unknown[] = []
    for (const c of CASES) {
      const res = await send(c.body)
      seen.push({ row: c.row, status: res.status, body: res.body })
    }
    expect(seen).toEqual(
      CASES.map((c) => ({
        row: c.row,
        status: 400,
        body: { success: false, errors: c.errors, _meta: expect.objectContaining(c.tip ? { _tip: c.tip } : {}) },
      })),
    )
    // nothing of it was written, and no proposal stored
    const nodes = await server.call('GET', `/api/v1/nodes?projectId=${P}`)
    expect(nodes.body.nodes.map((n: { id: string }) => n.id)).toEqual(SEEDED)
    const proposals = await server.call('GET', `/api/v1/proposals?projectId=${P}`)
    expect([proposals.status, proposals.body.proposals]).toEqual([200, []])
  })

  it('takes the same data on the type it is valid on: an update of a draft approach, a proposal of a bet', async () => {
    const batch = await send({
      action: 'batch',
      mutations: [
        { action: 'add', node: { id: 'draft-b', type: 'approach', parentId: 'need-1', data: { label: 'B' } } },
        { action: 'update', nodeId: 'draft-b', data: { kano: 'delighter', size: 'car' } },
      ],
    })
    expect([batch.status, batch.body.results[1].node.data]).toEqual([200, { label: 'B', kano: 'delighter', size: 'car' }])
    const proposed = await send({
      action: 'propose',
      title: 'Sized',
      mutations: [{ action: 'update', nodeId: 'approach-1', data: { size: 'vespa' } }],
    })
    expect([proposed.status, proposed.body.proposal.status]).toEqual([200, 'open'])
  })
})
