import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import claimSql from '../sql/idempotency/claim.sql' with { type: 'text' }
import { requestHash } from '../src/http/idempotency'
import { applyKey } from '../src/workflow/apply'
import { ADMIN_TOKEN, startApp, type TestApp } from './helpers'
import { nodes, planProject, workflow } from './workflow-fixtures'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app.close())

const draft = { id: 'draft-1', type: 'job', parentId: 'approach-1', data: { label: 'CSV export works' } }

async function started(projectId: string, key?: string) {
  const res = await workflow(app, { projectId, action: 'start', flow: 'add', input: 'CSV export' }, key)
  expect(res.status).toBe(200)
  return res.body.state as string
}

/** Flip one bit of one character (a code unit of the string as sent). */
function flip(s: string, rand: () => number): string {
  const i = Math.floor(rand() * s.length)
  const bit = 1 << Math.floor(rand() * 8)
  return s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ bit) + s.slice(i + 1)
}

/** A small seeded generator, so a failure can be replayed. */
function lcg(seed: number) {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    return x / 2 ** 32
  }
}

describe('workflow state', () => {
  it('refuses 1,000 bit-flipped states, every one with a 4xx JSON answer, and writes nothing', async () => {
    const projectId = await planProject(app)
    const state = await started(projectId)
    const rand = lcg(20261123)
    const statuses = new Map<number, number>()
    for (let n = 0; n < 1000; n++) {
      const tampered = flip(state, rand)
      expect(tampered).not.toBe(state)
      const res = await workflow(app, {
        projectId,
        action: 'advance',
        state: tampered,
        response: { signal: 'draft_ready', draftNodes: [draft] },
      })
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      expect(typeof res.body.error).toBe('string')
    }
    expect([...statuses]).toEqual([[400, 1000]])
    expect(await nodes(app, projectId)).toHaveLength(6)
    // the genuine state still works
    const ok = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft] } })
    expect(ok.status).toBe(200)
  })

  it("refuses a state sent with another project's id, even when the key reaches both", async () => {
    const a = await planProject(app)
    const b = await planProject(app)
    const state = await started(a)
    const res = await workflow(app, { projectId: b, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft] } })
    expect(res.status).toBe(400)
    expect(res.body.error).toBe(`state belongs to another project than ${b}`)
    expect(await nodes(app, b)).toHaveLength(6)
  })

  it("refuses another user's state on a shared project", async () => {
    const member = await app.user({ tier: 'team' })
    const projectId = await planProject(app)
    await app.call('POST', '/api/v1/members', { body: { projectId, userId: member.id } })
    const state = await started(projectId)
    const res = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'confirmed' } }, member.key)
    expect(res.status).toBe(400)
    expect(res.body.error).toBe('state belongs to another user')
  })

  it('refuses a state once 24 hours have passed since it was issued', async () => {
    const projectId = await planProject(app)
    const state = await started(projectId)
    const realNow = app.deps.now
    try {
      app.deps.now = () => new Date(Date.now() + 24 * 3_600_000 - 60_000)
      const fresh = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'needs_clarification', message: 'Q?' } })
      expect(fresh.status).toBe(200)
      app.deps.now = () => new Date(Date.now() + 24 * 3_600_000 + 60_000)
      const res = await workflow(app, { projectId, action: 'advance', state, response: { signal: 'draft_ready', draftNodes: [draft] } })
      expect(res.status).toBe(400)
      expect(res.body.error).toStartWith('state expired at ')
      expect(res.body._meta).toEqual({
        _tip: 'A state is valid for 24 hours after it was issued.',
        guide: 'http://arbor.test/api/v1/guide',
      })
    } finally {
      app.deps.now = realNow
    }
  })

  it('carries only the last 100 turns of history into the prompt', async () => {
    const projectId = await planProject(app)
    let state = await started(projectId)
    let prompt = ''
    for (let i = 1; i <= 60; i++) {
      const res = await workflow(app, {
        projectId,
        action: 'advance',
        state,
        response: { signal: 'needs_clarification', message: `Question ${i}?` },
        nextInput: `Answer ${i}`,
      })
      expect(res.status).toBe(200)
      state = res.body.state
      prompt = res.body.prompt
    }
    const turns = prompt.split('## The conversation so far (oldest first)\n')[1]!.split('\n## ')[0]!.trim().split('\n')
    expect(turns).toHaveLength(100)
    expect(turns[0]).toBe('- You (needs_clarification): Question 11?')
    expect(turns.at(-1)).toBe('- User: Answer 60')
  })

  it('answers 500 retry:true with a still-running tip while an identical apply is in flight', async () => {
    const projectId = await planProject(app)
    const state = await started(projectId)
    const response = { signal: 'draft_ready', draftNodes: [draft] }
    const users = await app.call('GET', '/admin/v1/users', { key: ADMIN_TOKEN })
    const owner = users.body.users.find((u: any) => u.name === 'owner')
    const key = applyKey(state, response)
    // the first attempt's claim on the key, as runIdempotent takes it before it writes
    await app.db.query(claimSql, [owner.id, key, requestHash({ workflow: 'add', projectId, key })])
    const res = await workflow(app, { projectId, action: 'advance', state, response })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({
      error: 'An identical apply is still running',
      retry: true,
      partialApply: false,
      _meta: { _tip: 'An identical apply is still running: wait a few seconds, then re-call advance with the same state and response.' },
    })
    expect(await nodes(app, projectId)).toHaveLength(6)
  })
})

describe('workflow state across processes', () => {
  it('is accepted by a second app on the same database: the signing secret lives in the database', async () => {
    const first = await startApp({}, { persist: true })
    try {
      const projectId = await planProject(first)
      const res = await first.call('POST', '/api/v1/workflow', { body: { projectId, action: 'start', flow: 'add', input: 'CSV' } })
      const second = await startApp({}, { reopen: first, persist: true })
      try {
        const next = await second.call('POST', '/api/v1/workflow', {
          body: { projectId, action: 'advance', state: res.body.state, response: { signal: 'draft_ready', draftNodes: [draft] } },
        })
        expect(next.status).toBe(200)
        expect(next.body.focus).toBe('job-3')
      } finally {
        await second.close()
      }
    } finally {
      await first.close()
    }
  })
})
