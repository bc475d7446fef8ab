import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ReadCache } from '../src/reads/cache'
import { startApp } from './helpers'

// Cached project reads (src/reads/cache.ts): kept while the project's revision is unchanged,
// never after a write, a claim's expiry or a revoke; access checked first; memory bounded.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>, key?: string) => {
  const res = await app.call('POST', '/api/v1/mutate', { body, key })
  if (res.status !== 200) throw new Error(`${body.action}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
const get = (path: string, key?: string | null) => app.call('GET', path, { key })

/** What the same read answers with no cache at all (a cache that keeps nothing, swapped in). */
async function uncached(path: string) {
  const kept = app.deps.reads
  app.deps.reads = new ReadCache({ db: app.deps.db, now: () => app.deps.now(), maxBytes: 0 })
  try {
    return await get(path)
  } finally {
    app.deps.reads = kept
  }
}

async function seed(): Promise<string> {
  const p = await app.project()
  await mutate({
    action: 'batch',
    projectId: p,
    mutations: [
      { action: 'addIteration', iteration: { name: 'S1' } },
      { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Grow revenue' } } },
      { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Churn is high' } } },
      { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Exit survey' } } },
      { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'Write the survey', iteration: 'S1' } } },
      { action: 'add', node: { type: 'task', data: { label: 'Fix the login page' } } },
    ],
  })
  return p
}

describe('a cached read', () => {
  it('answers a repeated read from memory with the same bytes and headers', async () => {
    const p = await seed()
    const first = await app.handle(
      new Request(`http://arbor.test/api/v1/nodes?projectId=${p}`, { headers: { authorization: `Bearer ${app.ownerKey}` } }),
    )
    const hits = app.deps.reads.stats.hits
    const second = await app.handle(
      new Request(`http://arbor.test/api/v1/nodes?projectId=${p}`, { headers: { authorization: `Bearer ${app.ownerKey}` } }),
    )
    expect(app.deps.reads.stats.hits).toBe(hits + 1)
    expect(await second.text()).toBe(await first.text())
    expect(second.headers.get('content-type')).toBe('application/json;charset=utf-8')
    expect(second.headers.get('cache-control')).toBe('no-store')
  })

  it('shows every kind of write in the very next read of every cached endpoint', async () => {
    const p = await seed()
    const share = await app.call('POST', '/api/v1/share', { body: { projectId: p } })
    const reads = [
      `/api/v1/nodes?projectId=${p}`,
      `/api/v1/nodes?projectId=${p}&type=job`,
      `/api/v1/tree?projectId=${p}&nodeId=goal-1&direction=down`,
      `/api/v1/tree?projectId=${p}&nodeId=job-1&direction=context`,
      `/api/v1/tree?projectId=${p}&format=outline`,
      `/api/v1/outline?projectId=${p}`,
      `/api/v1/iterations?projectId=${p}`,
      `/api/v1/iterations?projectId=${p}&current=true`,
      `/api/v1/search?projectId=${p}&q=survey&mode=keyword`,
      `/api/v1/export-okf?projectId=${p}`,
      `/api/v1/public/share/${share.body.token}`,
    ]
    const check = async (after: string) => {
      for (const path of reads) {
        const cached = await get(path)
        const fresh = await uncached(path)
        // the export's index.md has the time it was made; everything else is compared whole
        const strip = (b: any) => (b?.files ? { ...b, files: { ...b.files, 'index.md': undefined } } : b)
        expect({ after, path, status: cached.status, body: strip(cached.body) }).toEqual({
          after,
          path,
          status: fresh.status,
          body: strip(fresh.body),
        })
      }
    }
    await check('nothing')
    await check('nothing, twice') // every read now comes from memory
    await mutate({
      action: 'add',
      projectId: p,
      node: { type: 'job', parentId: 'approach-1', data: { label: 'Survey churned users', iteration: 'S1' } },
    })
    await check('add')
    await mutate({
      action: 'update',
      projectId: p,
      nodeId: 'job-1',
      data: { label: 'Write the exit survey', description: 'Five questions' },
    })
    await check('update')
    await mutate({ action: 'delete', projectId: p, nodeId: 'job-2' })
    await check('delete')
    await mutate({ action: 'restore', projectId: p, nodeId: 'job-2' })
    await check('restore')
    await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S2' } })
    await check('addIteration')
    await mutate({ action: 'updateIteration', projectId: p, iterationName: 'S1', data: { status: 'done' } })
    await check('updateIteration')
    await mutate({ action: 'reorderIterations', projectId: p, order: ['S2', 'S1', 'Later'] })
    await check('reorderIterations')
    await mutate({ action: 'renameProject', projectId: p, name: 'Revenue plan' })
    await check('renameProject')
    const claim = await mutate({ action: 'claim', projectId: p, agent: 'agent-7', nodeIds: ['job-1'], leaseSeconds: 60 })
    await check('claim')
    await mutate({ action: 'renewClaim', projectId: p, claimToken: claim.claims[0].claimToken, leaseSeconds: 3600 })
    await check('renewClaim')
    await mutate({ action: 'releaseClaim', projectId: p, claimToken: claim.claims[0].claimToken })
    await check('releaseClaim')
    await mutate({ action: 'deleteIteration', projectId: p, iterationName: 'S2' })
    await check('deleteIteration')
    await mutate({ action: 'classify', projectId: p, nodeId: 'task-1' })
    await check('classify')
    expect((await get(`/api/v1/export-okf?projectId=${p}`)).body.project.name).toBe('Revenue plan')
  })

  it('drops a claim from /nodes, /tree and /outline once it expires, without any write', async () => {
    const p = await seed()
    await mutate({ action: 'claim', projectId: p, agent: 'agent-1', nodeIds: ['job-1'], leaseSeconds: 30 })
    const claimed = (res: any) => res.body.nodes.find((n: any) => n.id === 'job-1').claim?.agent
    const outline = (res: any) => res.body.outline.includes('claimed by agent-1')
    expect(claimed(await get(`/api/v1/nodes?projectId=${p}`))).toBe('agent-1')
    expect(claimed(await get(`/api/v1/tree?projectId=${p}&nodeId=approach-1&direction=down`))).toBe('agent-1')
    expect(outline(await get(`/api/v1/outline?projectId=${p}`))).toBe(true)
    const realNow = app.deps.now
    app.deps.now = () => new Date(Date.now() + 31_000)
    try {
      expect(claimed(await get(`/api/v1/nodes?projectId=${p}`))).toBeUndefined()
      expect(claimed(await get(`/api/v1/tree?projectId=${p}&nodeId=approach-1&direction=down`))).toBeUndefined()
      expect(outline(await get(`/api/v1/outline?projectId=${p}`))).toBe(false)
    } finally {
      app.deps.now = realNow
    }
  })

  it('checks access before it answers: a kept answer reaches no one who may not read the project', async () => {
    const p = await seed()
    expect((await get(`/api/v1/nodes?projectId=${p}`)).status).toBe(200)
    const stranger = await app.user({ tier: 'team' })
    const refused = await get(`/api/v1/nodes?projectId=${p}`, stranger.key)
    expect(refused.status).toBe(403)
    expect(refused.body.nodes).toBeUndefined()
    // a revoked share link stops serving at once, though its view was kept
    const share = await app.call('POST', '/api/v1/share', { body: { projectId: p } })
    expect((await get(`/api/v1/public/share/${share.body.token}`, null)).status).toBe(200)
    await app.call('DELETE', `/api/v1/share?projectId=${p}&token=${share.body.token}`)
    expect((await get(`/api/v1/public/share/${share.body.token}`, null)).status).toBe(404)
  })

  it('answers a bad query as before, and keeps no answer for it', async () => {
    const p = await seed()
    for (let i = 0; i < 2; i++) {
      const res = await get(`/api/v1/nodes?projectId=${p}&type=epic`)
      expect(res.status).toBe(400)
      expect(res.body.errors).toEqual(['type must be one of: goal, need, approach, job, task'])
    }
    const tree = await get(`/api/v1/tree?projectId=${p}&nodeId=job-99&direction=up`)
    expect(tree.status).toBe(404)
  })
})

describe('ReadCache', () => {
  const cache = (maxBytes: number) => new ReadCache({ db: app.deps.db, now: () => new Date(), maxBytes })

  it('holds at most its budget, dropping the least recently used answers first', async () => {
    const reads = cache(16 * 1024)
    const kilobyte = 'x'.repeat(1000)
    for (let i = 0; i < 40; i++) await reads.answer('bounded', `k${i}`, {}, async () => ({ i, kilobyte }))
    expect(reads.size().bytes).toBeLessThanOrEqual(16 * 1024)
    expect(reads.size().entries).toBeGreaterThan(10)
    expect(reads.stats.evictions).toBeGreaterThan(20)
    let loads = 0
    await reads.answer('bounded', 'k39', {}, async () => ++loads) // the newest is still there
    await reads.answer('bounded', 'k0', {}, async () => ++loads) // the oldest was dropped
    expect(loads).toBe(1)
    // an answer larger than a quarter of the budget is sent, not kept
    const big = 'y'.repeat(5 * 1024)
    expect(await (await reads.answer('bounded', 'big', {}, async () => big)).json()).toBe(big)
    await reads.answer('bounded', 'big', {}, async () => ++loads)
    expect(loads).toBe(2)
  })

  it('shares one load among concurrent misses of one key', async () => {
    const reads = cache(1024 * 1024)
    let loads = 0
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        reads.answer('flight', 'k', {}, async () => {
          loads++
          await Bun.sleep(20)
          return { ok: true }
        }),
      ),
    )
    expect(loads).toBe(1)
    expect(await Promise.all(answers.map((r) => r.json()))).toEqual(Array.from({ length: 20 }, () => ({ ok: true })))
  })

  it('does not keep an answer its `keep` refuses (a search still indexing), nor one that failed', async () => {
    const reads = cache(1024 * 1024)
    let loads = 0
    for (let i = 0; i < 3; i++) await reads.answer('keep', 'k', { keep: () => false }, async () => ++loads)
    expect(loads).toBe(3)
    for (let i = 0; i < 2; i++)
      await expect(
        reads.answer('keep', 'bad', {}, async () => {
          loads++
          throw new Error('no')
        }),
      ).rejects.toThrow('no')
    expect(loads).toBe(5)
  })
})

it('is told about every statement that writes what a cached read returns', () => {
  // Each of these files' callers advances the project's revision in the same transaction:
  // through the changes it records (src/history/record.ts), the events it saves (src/events/outbox.ts `save`) or
  // bumpRevision. A new writer fails this test until it
  // is added here with the way its callers advance the revision.
  const sqlDir = join(import.meta.dir, '..', 'sql')
  const writers: string[] = []
  for (const dir of readdirSync(sqlDir))
    if (dir !== 'migrations')
      for (const file of readdirSync(join(sqlDir, dir))) {
        const text = readFileSync(join(sqlDir, dir, file), 'utf8').replace(/--.*$/gm, '')
        if (/\b(insert\s+into|update|delete\s+from)\s+(nodes|iterations|claims|projects)\b/i.test(text)) writers.push(`${dir}/${file}`)
      }
  expect(writers.sort()).toEqual(
    [
      // events: the claim and release events; renewClaim and the ends of a done or deleted node's claim bump or save events
      'claims/end-nodes.sql',
      'claims/extend-for-reader.sql', // bumpRevision in renewForReader
      'claims/extend-tokens.sql', // events: those of the write that carried the tokens
      'claims/release.sql',
      'claims/renew.sql', // bumpRevision in renewClaim
      'claims/take.sql',
      // the changes recorded (with or without an event: gitTags and sortOrder have none); reorderIterations calls bumpRevision too
      'iterations/delete.sql',
      'iterations/insert.sql',
      'iterations/set-order.sql',
      'iterations/update.sql',
      // events: node.added/updated/deleted, when a write is saved (src/events/outbox.ts `save`), the classify loop's too
      'nodes/delete-many.sql',
      'nodes/insert-many.sql',
      'nodes/move-iteration.sql',
      'nodes/set-classified-many.sql',
      'nodes/set-classified.sql',
      'nodes/update.sql',
      // a new project has no cached reads; renameProject calls bumpRevision; the archived flag
      // is in no cached read (GET /projects is the auth cache's)
      'projects/insert-project.sql',
      'projects/insert-system-iteration.sql',
      'projects/rename.sql',
      'projects/set-archived.sql',
      // an import's own project (src/projects/importing.ts): every read of it is refused until the
      // import ends (no read of it is cached before), and a never-finished one is removed whole
      'projects/begin-import.sql',
      'projects/delete-import-part.sql',
      'projects/delete-import.sql',
      'projects/set-import-lease.sql',
    ].sort(),
  )
})
