import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { ADMIN_TOKEN } from './helpers'
import { replicas, type ServerProcess, startServer } from './process'

// live.md sections 2–4 through the real server process: the stream, presence and edit intents.

const onPostgres = !!process.env.TEST_DATABASE_URL
const haproxy = Bun.which('haproxy') ?? (Bun.file('/usr/sbin/haproxy').size ? '/usr/sbin/haproxy' : null)
const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` }

interface Msg {
  id?: string
  event: string
  data: any
}

/** An open SSE stream read as it arrives: its messages, its comments, and whether it ended. */
interface Sse {
  status: number
  headers: Headers
  body: any
  messages: Msg[]
  comments: string[]
  ended: boolean
  close: () => void
}

async function openStream(url: string, key: string | null, headers: Record<string, string> = {}): Promise<Sse> {
  const ctl = new AbortController()
  const res = await fetch(url, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers }, signal: ctl.signal })
  const sse: Sse = {
    status: res.status,
    headers: res.headers,
    body: null,
    messages: [],
    comments: [],
    ended: false,
    close: () => ctl.abort(),
  }
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    sse.body = await res.json()
    sse.ended = true
    return sse
  }
  void (async () => {
    const decoder = new TextDecoder()
    let buf = ''
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk, { stream: true })
        let at = buf.indexOf('\n\n')
        while (at >= 0) {
          const block = buf.slice(0, at)
          buf = buf.slice(at + 2)
          const msg: Partial<Msg> & { data?: string } = {}
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) sse.comments.push(line.slice(1).trim())
            else if (line.startsWith('id: ')) msg.id = line.slice(4)
            else if (line.startsWith('event: ')) msg.event = line.slice(7)
            else if (line.startsWith('data: ')) msg.data = (msg.data ?? '') + line.slice(6)
          }
          if (msg.event) sse.messages.push({ id: msg.id, event: msg.event, data: JSON.parse(msg.data ?? 'null') })
          at = buf.indexOf('\n\n')
        }
      }
    } catch {}
    sse.ended = true
  })()
  return sse
}

const events = (s: Sse) => s.messages.filter((m) => m.event !== 'presence')
const presence = (s: Sse) => s.messages.filter((m) => m.event === 'presence').map((m) => m.data)

async function newUser(server: ServerProcess, name: string): Promise<{ id: string; key: string; keyId: string }> {
  const created = await server.call('POST', '/admin/v1/users', { key: null, headers: adminHeaders, body: { name, tier: 'team' } })
  const minted = await server.call('POST', `/admin/v1/users/${created.body.user.id}/api-keys`, {
    key: null,
    headers: adminHeaders,
    body: {},
  })
  return { id: created.body.user.id, key: minted.body.apiKey, keyId: minted.body.keyId }
}

async function addGoal(server: ServerProcess, projectId: string, label: string, key?: string): Promise<string> {
  const res = await server.call('POST', '/api/v1/mutate', {
    key,
    body: { action: 'add', projectId, node: { type: 'goal', data: { label } } },
  })
  expect(res.status).toBe(200)
  return res.body.node.id
}

describe('the stream, presence and edit intents, one server process', () => {
  let server: ServerProcess
  const P = 'live'
  const streamUrl = (q = '') => `${server.url}/api/v1/stream?projectId=${P}${q}`

  beforeAll(async () => {
    server = await startServer()
    await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Live', id: P } } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it('sends every event of /events in order, each with its cursor as id, from the moment it opens', async () => {
    await addGoal(server, P, 'before the stream')
    // an event shows once every older transaction has ended (on a shared PostgreSQL, other
    // databases' too): start from a cursor past it
    const start = await server.until(
      async () => {
        const page = (await server.call('GET', `/api/v1/events?projectId=${P}&limit=500`)).body
        return page.events.some((e: any) => e.node?.data.label === 'before the stream') && page.nextCursor
      },
      30_000,
      'the event before the stream listed',
    )
    const s = await openStream(streamUrl(), server.ownerKey)
    expect(s.status).toBe(200)
    expect(s.headers.get('content-type')).toStartWith('text/event-stream')
    // the stream is open once its first bytes arrived; what was committed before it is not sent
    await server.until(async () => s.comments.includes('open'), 30_000, 'the stream open')
    for (const label of ['one', 'two', 'three']) await addGoal(server, P, label)
    await server.until(async () => events(s).length >= 3, 30_000, 'three events on the stream')
    const listed = (await server.call('GET', `/api/v1/events?projectId=${P}&after=${start}`)).body
    expect(events(s).map((m) => m.data)).toEqual(listed.events)
    expect(events(s).map((m) => m.event)).toEqual(['node.added', 'node.added', 'node.added'])
    expect(events(s).map((m) => m.data.node.data.label)).toEqual(['one', 'two', 'three'])
    // each id is the cursor after its event: /events after the previous id lists exactly it
    let prev = start
    for (const m of events(s)) {
      const page = (await server.call('GET', `/api/v1/events?projectId=${P}&after=${prev}&limit=1`)).body
      expect({ next: page.nextCursor, event: page.events[0] }).toEqual({ next: m.id, event: m.data })
      prev = m.id
    }
    s.close()
  })

  it('resumes with Last-Event-ID (or after) with no event skipped or sent twice', async () => {
    const first = await openStream(streamUrl(), server.ownerKey)
    await server.until(async () => first.comments.includes('open'), 30_000, 'the stream open')
    for (const label of ['r1', 'r2']) await addGoal(server, P, label)
    await server.until(async () => events(first).length >= 2, 30_000, 'two events')
    first.close()
    const last = events(first).at(-1)!.id!
    for (const label of ['r3', 'r4', 'r5']) await addGoal(server, P, label)
    const again = await openStream(streamUrl(), server.ownerKey, { 'last-event-id': last })
    await server.until(async () => events(again).length >= 3, 30_000, 'the missed events')
    await addGoal(server, P, 'r6')
    await server.until(async () => events(again).length >= 4, 30_000, 'the live event after them')
    expect(events(again).map((m) => m.data.node.data.label)).toEqual(['r3', 'r4', 'r5', 'r6'])
    again.close()
    // `after` does the same; Last-Event-ID wins over it
    const byAfter = await openStream(streamUrl(`&after=${last}`), server.ownerKey)
    await server.until(async () => events(byAfter).length >= 4, 30_000, 'the events after the cursor')
    expect(events(byAfter).map((m) => m.data.node.data.label)).toEqual(['r3', 'r4', 'r5', 'r6'])
    byAfter.close()
    const both = await openStream(streamUrl(`&after=${last}`), server.ownerKey, { 'last-event-id': events(again).at(-2)!.id! })
    await server.until(async () => events(both).length >= 1, 30_000, 'the event after Last-Event-ID')
    expect(events(both).map((m) => m.data.node.data.label)).toEqual(['r6'])
    both.close()
  })

  it('answers a cursor older than the events kept with one reset, then live events', async () => {
    const s = await openStream(streamUrl(), server.ownerKey, { 'last-event-id': '1_1' })
    await server.until(async () => s.messages.length >= 1, 30_000, 'the reset')
    expect(s.messages[0]).toEqual({ id: undefined, event: 'reset', data: { reason: 'cursor_expired' } })
    await addGoal(server, P, 'after the reset')
    await server.until(async () => events(s).some((m) => m.data?.node?.data.label === 'after the reset'), 30_000, 'a live event')
    // one reset, then events only
    expect(events(s).filter((m) => m.event === 'reset')).toHaveLength(1)
    expect(
      events(s)
        .slice(1)
        .every((m) => m.event === 'node.added' && m.id),
    ).toBe(true)
    s.close()
  })

  it('refuses as /events does, in JSON, before any stream starts', async () => {
    const none = await openStream(streamUrl(), null)
    expect({ status: none.status, error: none.body.error }).toEqual({ status: 401, error: 'unauthorized' })
    // a key in the URL is ignored
    const inUrl = await openStream(`${streamUrl()}&key=${server.ownerKey}&api_key=${server.ownerKey}`, null)
    expect(inUrl.status).toBe(401)
    const stranger = await newUser(server, 'stranger')
    const denied = await openStream(streamUrl(), stranger.key)
    expect({ status: denied.status, error: denied.body.error }).toEqual({ status: 403, error: 'project_access_denied' })
    const bad = await openStream(streamUrl('&after=nope'), server.ownerKey)
    expect(bad.status).toBe(400)
    expect(JSON.stringify(bad.body)).toContain('after')
    const badHeader = await openStream(streamUrl(), server.ownerKey, { 'last-event-id': 'nope' })
    expect(badHeader.status).toBe(400)
  })

  it('holds at most 20 open streams per key: the 21st gets 429 with Retry-After', async () => {
    const user = await newUser(server, 'many streams')
    await server.call('POST', '/api/v1/members', { body: { projectId: P, userId: user.id } })
    const open: Sse[] = []
    for (let i = 0; i < 20; i++) open.push(await openStream(streamUrl(), user.key))
    expect(open.map((s) => s.status)).toEqual(Array(20).fill(200))
    const extra = await openStream(streamUrl(), user.key)
    expect({ status: extra.status, error: extra.body.error, retryAfter: Number(extra.headers.get('retry-after')) > 0 }).toEqual({
      status: 429,
      error: 'too_many_streams',
      retryAfter: true,
    })
    // another key of the same project is not held to this key's count
    const other = await openStream(streamUrl(), server.ownerKey)
    expect(other.status).toBe(200)
    other.close()
    open[0]!.close()
    const again = await server.until(
      async () => {
        const s = await openStream(streamUrl(), user.key)
        if (s.status === 200) return s
        return null
      },
      30_000,
      'a stream once one closed',
    )
    again.close()
    for (const s of open) s.close()
  })

  it('ends the streams of a revoked key, and of a removed member, within 5 seconds', async () => {
    const minted = await server.call('POST', '/api/v1/keys', { body: { label: 'stream key' } })
    const s = await openStream(streamUrl(), minted.body.apiKey)
    expect(s.status).toBe(200)
    await server.until(async () => s.comments.includes('open'), 30_000, 'the stream open')
    expect((await server.call('DELETE', `/api/v1/keys?keyId=${minted.body.keyId}`)).status).toBe(200)
    await server.until(async () => s.ended, 30_000, 'the revoked key’s stream ended')

    const member = await newUser(server, 'member')
    await server.call('POST', '/api/v1/members', { body: { projectId: P, userId: member.id } })
    const m = await openStream(streamUrl(), member.key)
    expect(m.status).toBe(200)
    await server.until(async () => m.comments.includes('open'), 30_000, 'the member’s stream open')
    expect((await server.call('DELETE', `/api/v1/members?projectId=${P}&userId=${member.id}`)).status).toBe(200)
    await server.until(async () => m.ended, 30_000, 'the removed member’s stream ended')
  })

  it('sends a keep-alive comment while nothing happens', async () => {
    const s = await openStream(streamUrl(), server.ownerKey)
    await server.until(async () => s.comments.includes('keep-alive'), 20_000, 'a keep-alive')
    s.close()
  })

  it('posts, lists and ends presence in the shapes of live.md, and says each change on the stream', async () => {
    const goal = await addGoal(server, P, 'presence goal')
    const s = await openStream(streamUrl(), server.ownerKey)
    await server.until(async () => s.comments.includes('open'), 30_000, 'the stream open')
    const posted = await server.call('POST', '/api/v1/presence', {
      headers: { 'x-agent-id': 'planner', 'x-arbor-via': 'mcp' },
      body: { projectId: P, nodeId: goal, note: 'drafting jobs' },
    })
    expect(posted.status).toBe(200)
    const me = (await server.call('GET', '/api/v1/keys')).body
    expect(me).toBeTruthy()
    expect(posted.body).toEqual({
      presence: {
        actor: { userId: expect.any(String), userName: 'owner', agent: 'planner', via: 'mcp' },
        nodeId: goal,
        note: 'drafting jobs',
        since: expect.any(String),
        expiresAt: posted.body.expiresAt,
      },
      expiresAt: expect.any(String),
    })
    const held = Date.parse(posted.body.expiresAt) - Date.parse(posted.body.presence.since)
    expect(held).toBe(30_000)
    // the same user without the agent is another actor
    await server.call('POST', '/api/v1/presence', { body: { projectId: P } })
    const listed = (await server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence
    expect(listed.map((p: any) => [p.actor.agent ?? null, p.actor.via, p.nodeId ?? null])).toEqual([
      ['planner', 'mcp', goal],
      [null, 'api', null],
    ])
    // a new post replaces the actor's presence
    await server.call('POST', '/api/v1/presence', {
      headers: { 'x-agent-id': 'planner', 'x-arbor-via': 'mcp' },
      body: { projectId: P, nodeId: goal, field: 'description' },
    })
    const replaced = (await server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence
    expect(replaced.filter((p: any) => p.actor.agent === 'planner').map((p: any) => p.field)).toEqual(['description'])
    expect(
      (await server.call('DELETE', `/api/v1/presence?projectId=${P}`, { headers: { 'x-agent-id': 'planner', 'x-arbor-via': 'mcp' } })).body,
    ).toEqual({
      success: true,
    })
    const after = (await server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence
    expect(after.map((p: any) => p.actor.agent ?? null)).toEqual([null])
    await server.until(async () => presence(s).length >= 4, 30_000, 'four presence messages')
    expect(presence(s).map((p) => [p.actor.agent ?? null, p.state, p.nodeId ?? null, p.field ?? null])).toEqual([
      ['planner', 'here', goal, null],
      [null, 'here', null, null],
      ['planner', 'here', goal, 'description'],
      ['planner', 'gone', goal, 'description'],
    ])
    expect(s.messages.filter((m) => m.event === 'presence').every((m) => m.id === undefined)).toBe(true)
    // presence is not an event of /events
    const all = (await server.call('GET', `/api/v1/events?projectId=${P}&limit=500`)).body.events
    expect(all.some((e: any) => /presence/.test(e.event))).toBe(false)
    await server.call('DELETE', `/api/v1/presence?projectId=${P}`)
    s.close()
  })

  it('refuses bad presence parameters by name, an unknown node with 404, another project with 403', async () => {
    const goal = await addGoal(server, P, 'checked goal')
    const bad = async (body: Record<string, unknown>): Promise<[number, string]> => {
      const res = await server.call('POST', '/api/v1/presence', { body: { projectId: P, ...body } })
      return [res.status, JSON.stringify(res.body)]
    }
    const [s1, b1] = await bad({ nodeId: 5 })
    expect([s1, b1.includes('nodeId')]).toEqual([400, true])
    const [s2, b2] = await bad({ nodeId: goal, field: 'nonsense' })
    expect([s2, b2.includes('field')]).toEqual([400, true])
    const [s3, b3] = await bad({ note: 'x'.repeat(101) })
    expect([s3, b3.includes('note')]).toEqual([400, true])
    const [s4, b4] = await bad({ field: 'label' })
    expect([s4, b4.includes('field')]).toEqual([400, true])
    const [s5, b5] = await bad({ nodeId: 'goal-999' })
    expect([s5, b5.includes('goal-999')]).toEqual([404, true])
    expect((await bad({ nodeId: goal, field: 'parentId' }))[0]).toBe(200)
    await server.call('DELETE', `/api/v1/presence?projectId=${P}`)
    const stranger = await newUser(server, 'presence stranger')
    expect((await server.call('GET', `/api/v1/presence?projectId=${P}`, { key: stranger.key })).status).toBe(403)
    expect((await server.call('POST', '/api/v1/presence', { key: stranger.key, body: { projectId: P } })).status).toBe(403)
    expect((await server.call('GET', `/api/v1/presence?projectId=${P}`, { key: null })).status).toBe(401)
  })

  it('lists an agent holding a live claim on its node with claim:true, until the claim ends', async () => {
    const w = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
          { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
          { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
          { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'claimable job' } } },
        ],
      },
    })
    expect(w.status).toBe(200)
    const task = w.body.idMap['draft-j']
    const s = await openStream(`${server.url}/api/v1/stream?projectId=${P}`, server.ownerKey)
    await server.until(async () => s.comments.includes('open'), 30_000, 'the stream open')
    const claimed = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'claim', projectId: P, agent: 'worker-7', nodeIds: [task] },
    })
    expect(claimed.status).toBe(200)
    const listed = (await server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence
    expect(listed.filter((p: any) => p.claim)).toEqual([
      {
        actor: { userId: expect.any(String), userName: 'owner', agent: 'worker-7', via: 'api' },
        nodeId: task,
        since: expect.any(String),
        expiresAt: claimed.body.claims[0].expiresAt,
        claim: true,
      },
    ])
    await server.call('POST', '/api/v1/mutate', {
      body: { action: 'releaseClaim', projectId: P, claimToken: claimed.body.claims[0].claimToken },
    })
    expect((await server.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence.filter((p: any) => p.claim)).toEqual([])
    // the stream says so too
    await server.until(async () => presence(s).length >= 2, 30_000, 'the claim’s presence on the stream')
    expect(presence(s).map((p) => [p.actor.agent, p.nodeId, p.state, p.claim])).toEqual([
      ['worker-7', task, 'here', true],
      ['worker-7', task, 'gone', true],
    ])
    s.close()
  })

  it('refuses other actors’ writes of a field being edited (409 being_edited) unless force; the actor’s own writes pass', async () => {
    const goal = await addGoal(server, P, 'edited goal')
    const person = await newUser(server, 'Pat Person')
    await server.call('POST', '/api/v1/members', { body: { projectId: P, userId: person.id } })
    const intent = await server.call('POST', '/api/v1/presence', {
      key: person.key,
      headers: { 'x-arbor-via': 'app' },
      body: { projectId: P, nodeId: goal, field: 'label' },
    })
    expect(intent.status).toBe(200)
    const write = (body: Record<string, unknown>, key?: string, headers: Record<string, string> = {}) =>
      server.call('POST', '/api/v1/mutate', { key, headers, body: { action: 'update', projectId: P, nodeId: goal, ...body } })
    const refused = await write({ data: { label: 'agent label' } }, undefined, { 'x-agent-id': 'bot' })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({
      error: 'being_edited',
      message: expect.any(String),
      target: { kind: 'node', id: goal },
      field: 'label',
      by: { actor: { userId: person.id, userName: 'Pat Person', via: 'app' } },
      until: intent.body.expiresAt,
      _meta: { _tip: expect.any(String) },
    })
    // the same user under another via is another actor
    expect((await write({ data: { label: 'api label' } }, person.key)).status).toBe(409)
    // in a batch, nothing of the batch is written
    const batch = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [
          { action: 'add', node: { type: 'goal', data: { label: 'batch goal' } } },
          { action: 'update', nodeId: goal, data: { label: 'batch label' } },
        ],
      },
    })
    expect({ status: batch.status, error: batch.body.error }).toEqual({ status: 409, error: 'being_edited' })
    const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${P}`)).body.nodes
    expect(nodes.some((n: any) => n.data.label === 'batch goal')).toBe(false)
    expect(nodes.find((n: any) => n.id === goal).data.label).toBe('edited goal')
    // another field, and a move, are not held by an intent on label
    expect((await write({ data: { description: 'agent description' } })).status).toBe(200)
    // the actor's own write passes
    expect((await write({ data: { label: 'person label' } }, person.key, { 'x-arbor-via': 'app' })).status).toBe(200)
    // force goes ahead, alone and in a batch
    expect((await write({ data: { label: 'forced' }, force: true })).status).toBe(200)
    const forcedBatch = await server.call('POST', '/api/v1/mutate', {
      body: {
        action: 'batch',
        projectId: P,
        mutations: [{ action: 'update', nodeId: goal, data: { label: 'forced in batch' }, force: true }],
      },
    })
    expect(forcedBatch.status).toBe(200)
    expect((await write({ data: { label: 'x' }, force: 'yes' })).status).toBe(400)
    // the intent on parentId holds moves
    await server.call('POST', '/api/v1/presence', {
      key: person.key,
      headers: { 'x-arbor-via': 'app' },
      body: { projectId: P, nodeId: goal, field: 'parentId' },
    })
    expect((await write({ data: { label: 'free again' } })).status).toBe(200)
    // once the person leaves, the write goes through
    await server.call('DELETE', `/api/v1/presence?projectId=${P}`, { key: person.key, headers: { 'x-arbor-via': 'app' } })
    expect((await write({ data: { label: 'after leaving' } })).status).toBe(200)
  })

  it('ends every stream cleanly on SIGTERM', async () => {
    const s = await openStream(streamUrl(), server.ownerKey)
    await server.until(async () => s.comments.includes('open'), 30_000, 'the stream open')
    expect(await server.stop()).toBe(0)
    await server.until(async () => s.ended, 30_000, 'the stream ended')
  })
})

describe.skipIf(!onPostgres)('the stream and presence across two replicas on one PostgreSQL', () => {
  const pair = replicas()
  const P = 'live-replicas'

  it('carries an event committed through one replica to a stream held by the other, and presence both ways', async () => {
    await pair.a.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'Replicated', id: P } } })
    const s = await openStream(`${pair.b.url}/api/v1/stream?projectId=${P}`, pair.a.ownerKey)
    await pair.b.until(async () => s.comments.includes('open'), 30_000, 'the stream open')
    const goal = await addGoal(pair.a, P, 'through a')
    await pair.b.until(async () => events(s).length >= 1, 30_000, 'the event on the other replica')
    expect(events(s)[0]!.data.node.id).toBe(goal)
    await pair.a.call('POST', '/api/v1/presence', { body: { projectId: P, nodeId: goal, field: 'label' } })
    await pair.b.until(async () => presence(s).length >= 1, 30_000, 'the presence message on the other replica')
    const listed = (await pair.b.call('GET', `/api/v1/presence?projectId=${P}`)).body.presence
    expect(listed.map((p: any) => [p.nodeId, p.field])).toEqual([[goal, 'label']])
    // the intent posted through a holds writes through b
    const refused = await pair.b.call('POST', '/api/v1/mutate', {
      headers: { 'x-agent-id': 'bot' },
      body: { action: 'update', projectId: P, nodeId: goal, data: { label: 'nope' } },
    })
    expect(refused.body.error).toBe('being_edited')
    // resume on the other replica with Last-Event-ID: nothing skipped, nothing twice
    const last = events(s).at(-1)!.id!
    s.close()
    await addGoal(pair.b, P, 'through b')
    const again = await openStream(`${pair.a.url}/api/v1/stream?projectId=${P}`, pair.a.ownerKey, { 'last-event-id': last })
    await pair.a.until(async () => events(again).length >= 1, 30_000, 'the event missed')
    expect(events(again).map((m) => m.data.node.data.label)).toEqual(['through b'])
    again.close()
  })

  it.skipIf(!haproxy)(
    'holds a stream through HAProxy (examples/scale-out) and resumes it, nothing lost or twice, after a replica is killed',
    async () => {
      const host = (u: string) => new URL(u).host
      // HAProxy on a port the kernel just had free (a random one once met another test's or a
      // CI step's listener, with two test files running at once, and HAProxy exited at once);
      // started again on another should it still lose the port before it binds it
      const startLb = async () => {
        for (let attempt = 1; ; attempt++) {
          const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
          const port = probe.port!
          probe.stop(true)
          const lb = Bun.spawn([haproxy!, '-db', '-f', join(import.meta.dir, '..', 'examples', 'scale-out', 'haproxy.cfg')], {
            env: {
              ...process.env,
              ARBOR_LB_PORT: String(port),
              ARBOR_REPLICA_1: host(pair.a.url),
              ARBOR_REPLICA_2: host(pair.b.url),
              ARBOR_REPLICA_3: host(pair.a.url),
            },
            stdout: 'ignore',
            stderr: 'ignore',
          })
          const base = `http://127.0.0.1:${port}`
          const state = await pair.a.until(
            async () => (lb.exitCode !== null ? 'exited' : (await fetch(`${base}/healthz`).catch(() => null))?.status === 200 && 'up'),
            60_000,
            'HAProxy up',
          )
          if (state === 'up') return { lb, base }
          if (attempt === 3) throw new Error(`HAProxy exited before it was up, three times (last exit code ${lb.exitCode})`)
        }
      }
      const { lb, base } = await startLb()
      try {
        const url = `${base}/api/v1/stream?projectId=${P}`
        const s = await openStream(url, pair.a.ownerKey)
        expect(s.status).toBe(200)
        await pair.a.until(async () => s.comments.includes('open'), 30_000, 'the stream open through HAProxy')
        for (const label of ['lb1', 'lb2', 'lb3']) await addGoal(pair.a, P, label)
        await pair.a.until(async () => events(s).length >= 3, 30_000, 'three events through HAProxy')
        const seen = events(s).map((m) => m.data.node.data.label)
        const last = events(s).at(-1)!.id!
        // b dies without a word; the stream (on a or b) is dropped and opened again through HAProxy
        pair.b.proc.kill('SIGKILL')
        await pair.b.proc.exited
        s.close()
        for (const label of ['lb4', 'lb5']) await addGoal(pair.a, P, label)
        const again = await pair.a.until(
          async () => {
            const r = await openStream(url, pair.a.ownerKey, { 'last-event-id': last })
            return r.status === 200 ? r : null
          },
          20_000,
          'the stream open again',
        )
        await addGoal(pair.a, P, 'lb6')
        await pair.a.until(async () => events(again).length >= 3, 30_000, 'the missed events and a live one')
        expect([...seen, ...events(again).map((m) => m.data.node.data.label)]).toEqual(['lb1', 'lb2', 'lb3', 'lb4', 'lb5', 'lb6'])
        again.close()
      } finally {
        lb.kill('SIGKILL')
        await lb.exited
      }
    },
    180_000, // its waits' deadlines, beyond the runner's 30 s for a test
  )
})
