import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { tick } from '../src/search/loop'
import { startApp, type TestApp } from './helpers'

// What one run of the search loop does after label updates (bench/writes.md, "Ninth pass: the
// search loop after an update"): the statements it sends do not grow with the updates it
// follows, it embeds each updated node's newest text once (not the texts in between, not its
// children: a node's vector is its own label and description), and search answers the newest
// label, with the children's ancestors carrying it.

/** An OpenAI-compatible /embeddings server that records every text asked for (a 32-d bag of hashed words). */
function embeddingsServer() {
  const texts: string[] = []
  const vector = (text: string) => {
    const v = new Array(32).fill(0)
    for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      let h = 7
      for (const c of w) h = (h * 31 + c.charCodeAt(0)) % 32
      v[h] += 1
    }
    return v
  }
  const server = Bun.serve({
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { input: string[] }
      texts.push(...body.input)
      return Response.json({ data: body.input.map((t, index) => ({ index, embedding: vector(t) })) })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/v1`, texts, stop: () => server.stop(true) }
}

describe('the search loop after label updates', () => {
  const emb = embeddingsServer()
  let app: TestApp
  let projectId: string
  let goal: string
  let needs: string[]
  /** statements sent while `fn` runs, by their first line of SQL (PostgreSQL: on the search's own pool) */
  const counted = async (fn: () => Promise<unknown>) => {
    const db = (app.db.background ?? app.db) as { query: (text: string, params?: unknown[]) => Promise<unknown> }
    const query = db.query
    const sent: string[] = []
    db.query = (text, params) => {
      sent.push(text.split('\n').find((l) => !l.startsWith('--')) ?? text)
      return query.call(db, text, params)
    }
    try {
      await fn()
    } finally {
      db.query = query
    }
    return sent
  }
  const update = async (nodeId: string, label: string) => {
    const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'update', projectId, nodeId, data: { label } } })
    expect(res.status).toBe(200)
  }
  const settle = async () => {
    for (let i = 0; i < 10 && (await tick(app.deps, new Date())).embedded; i++);
  }

  beforeAll(async () => {
    app = await startApp({ EMBEDDINGS_URL: emb.url, EMBEDDINGS_MODEL: 'bag-of-words' })
    projectId = await app.project()
    const add = async (type: string, label: string, parentId?: string) =>
      (
        await app.call('POST', '/api/v1/mutate', {
          body: { action: 'add', projectId, node: { type, ...(parentId ? { parentId } : {}), data: { label } } },
        })
      ).body.node.id as string
    goal = await add('goal', 'Grow the reseller channel')
    needs = [
      await add('need', 'Resellers see their commission each month', goal),
      await add('need', 'Partners onboard without a call', goal),
    ]
    await tick(app.deps, new Date()) // the first run starts following from now and loads nothing
    await app.call('GET', `/api/v1/search?projectId=${projectId}&q=reseller`) // loads the index
    await settle()
  }, 60_000)
  afterAll(async () => {
    await app.close()
    emb.stop()
  })

  test('a run after twenty updates sends what a run after one does, and embeds the newest label only', async () => {
    await update(goal, 'Widen the distributor network')
    emb.texts.length = 0
    const afterOne = await counted(() => tick(app.deps, new Date()))
    expect(emb.texts).toEqual(['Widen the distributor network'])
    await settle()

    for (let i = 1; i <= 20; i++) await update(goal, `Grow wholesale partnerships, step ${i}`)
    emb.texts.length = 0
    const afterTwenty = await counted(() => tick(app.deps, new Date()))
    // the children's vectors are their own texts: a label change of their parent embeds nothing of theirs
    expect(emb.texts).toEqual(['Grow wholesale partnerships, step 20'])
    expect(afterTwenty.length).toBe(afterOne.length)
    expect([...afterTwenty].sort()).toEqual([...afterOne].sort())
    await settle()
    emb.texts.length = 0
    const idle = await counted(() => tick(app.deps, new Date()))
    expect(emb.texts).toEqual([])
    expect(idle.length).toBeLessThan(afterOne.length) // nothing written: no read of the outbox, nothing stored
  })

  test('search answers the newest label, and the children carry it among their ancestors', async () => {
    const res = await app.call('GET', `/api/v1/search?projectId=${projectId}&q=${encodeURIComponent('wholesale partnerships')}&limit=3`)
    expect(res.status).toBe(200)
    expect(res.body.results[0].node.id).toBe(goal)
    expect(res.body.results[0].node.data.label).toBe('Grow wholesale partnerships, step 20')
    const child = await app.call('GET', `/api/v1/search?projectId=${projectId}&q=${encodeURIComponent('commission each month')}&limit=1`)
    expect(child.body.results.map((r: any) => r.node.id)).toEqual([needs[0]])
    expect(child.body.results[0].ancestors).toEqual([{ id: goal, type: 'goal', label: 'Grow wholesale partnerships, step 20' }])
    expect(child.body._meta.search.pendingNodes).toBe(0)
  })
})
