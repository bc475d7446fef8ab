import { afterAll, describe, expect, it } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Db } from '../src/db'
import { startApp } from './helpers'

// What a batch reads before its entries: the ids its adds need asked for (src/nodes/batch-ids.ts
// `allocateBatchIds`, src/nodes/read.ts `askIds`), then the nodes its entries name, parents among
// them (src/nodes/read.ts `readNamed`), read once for the whole batch and sent before the
// counters' answer (on PostgreSQL one round trip), and its answers are as before.
const app = await startApp()
afterAll(() => app.close())
/** the statements that read (and lock) named nodes: several ids, one id, an updated node with its edit intents */
const nodeReads = ['lock-many.sql', 'lock-one.sql', 'lock-with-intent.sql'].map((f) =>
  readFileSync(join(import.meta.dir, '..', 'sql', 'nodes', f), 'utf8'),
)

/** What the app sends and gets back while `fn` runs, in order: `send <statement>` and `done <statement>`. */
async function traffic(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = []
  const real = app.deps.db
  const name = (text: string) => (text.includes('insert into node_counters') ? 'counter' : nodeReads.includes(text) ? 'read' : 'other')
  const wrap = (db: Db): Db =>
    new Proxy(db, {
      get(target, key) {
        if (key === 'query')
          return async (text: string, params?: unknown[]) => {
            seen.push(`send ${name(text)}`)
            const rows = await target.query(text, params)
            seen.push(`done ${name(text)}`)
            return rows
          }
        if (key === 'tx') return <T>(run: (tx: Db) => Promise<T>) => target.tx((tx) => run(wrap(tx)))
        const value = Reflect.get(target, key)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  app.deps.db = wrap(real)
  try {
    await fn()
  } finally {
    app.deps.db = real
  }
  return seen.filter((s) => !s.endsWith('other'))
}

const mutate = async (body: Record<string, unknown>) => app.call('POST', '/api/v1/mutate', { body })

async function tree(p: string) {
  const res = await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
      { action: 'add', node: { id: 'draft-b', type: 'approach', parentId: 'draft-n', data: { label: 'B' } } },
    ],
  })
  expect(res.status).toBe(200)
  return [res.body.idMap['draft-a'], res.body.idMap['draft-b']] as string[]
}

describe('a batch of adds', () => {
  it('reads the parents its adds name once, sent with the ids’ counter before its answer', async () => {
    const p = await app.project()
    const [a, b] = await tree(p)
    const jobs = Array.from({ length: 100 }, (_, i) => ({
      action: 'add',
      node: { type: 'job', parentId: i % 2 ? a : b, data: { label: `J${i}` } },
    }))
    let res: Awaited<ReturnType<typeof mutate>> | undefined
    const sent = await traffic(async () => {
      res = await mutate({ action: 'batch', projectId: p, mutations: jobs })
    })
    expect(res!.status).toBe(200)
    expect(sent).toEqual(['send counter', 'send read', 'done counter', 'done read'])
    expect(res!.body.results.map((r: any) => r.node.parentId)).toEqual(jobs.map((j) => j.node.parentId))
    expect(new Set(res!.body.results.map((r: any) => r.nodeId)).size).toBe(100)
  })

  it('sends every type’s counter, then the nodes its adds and updates name, before the first answer', async () => {
    const p = await app.project()
    const [a, b] = await tree(p)
    const mutations = [
      { action: 'add', node: { type: 'job', parentId: a, data: { label: 'J' } } },
      { action: 'add', node: { type: 'task', data: { label: 'T' } } },
      { action: 'update', nodeId: a, data: { label: 'A2' } },
      { action: 'update', nodeId: b, data: { label: 'B2' } },
    ]
    let res: Awaited<ReturnType<typeof mutate>> | undefined
    const sent = await traffic(async () => {
      res = await mutate({ action: 'batch', projectId: p, mutations })
    })
    expect(res!.status).toBe(200)
    // then each update's own statement, its node's edit intents (src/nodes/read.ts `getNodeWithIntent`)
    expect(sent).toEqual([
      'send counter',
      'send counter',
      'send read',
      'done counter',
      'done counter',
      'done read',
      ...Array(2).fill(['send read', 'done read']).flat(),
    ])
    expect(res!.body.results.map((r: any) => r.node.parentId)).toEqual([a, null, expect.any(String), expect.any(String)])
    expect(res!.body.results.slice(2).map((r: any) => r.node.data.label)).toEqual(['A2', 'B2'])
  })

  it('refuses an add under a parent that does not exist, or of the wrong type, as before', async () => {
    const p = await app.project()
    const [a] = await tree(p)
    const missing = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [
        { action: 'add', node: { type: 'job', parentId: a, data: { label: 'J' } } },
        { action: 'add', node: { type: 'job', parentId: 'approach-99', data: { label: 'K' } } },
      ],
    })
    expect(missing.status).toBe(400)
    expect(missing.body.errors).toEqual([expect.stringMatching(/^mutations\[1\]: .*approach-99/)])
    const wrong = await mutate({
      action: 'batch',
      projectId: p,
      mutations: [{ action: 'add', node: { type: 'job', parentId: 'goal-1', data: { label: 'J' } } }],
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body.errors).toEqual([expect.stringMatching(/^mutations\[0\]: .*goal-1/)])
    // nothing of either was written
    const nodes = (await app.call('GET', `/api/v1/nodes?projectId=${p}`)).body.nodes
    expect(nodes.filter((n: any) => n.type === 'job')).toEqual([])
  })
})
