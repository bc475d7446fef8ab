import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import claimSql from '../sql/idempotency/claim.sql' with { type: 'text' }
import completeSql from '../sql/idempotency/complete.sql' with { type: 'text' }
import type { User } from '../src/accounts/model'
import type { RefusalError } from '../src/errors'
import { applyError } from '../src/workflow/apply'
import { startApp, type TestApp } from './helpers'

// The terminal-apply table of api.md for failures no request can provoke on purpose: a write
// that fails in a way the server cannot read. Whether the transaction committed is read back
// from the idempotency record that commits with it.
let app: TestApp
let user: User
beforeAll(async () => {
  app = await startApp()
  const users = await app.call('GET', '/admin/v1/users', { key: 'test-admin-token-0123456789abcdef' })
  user = { id: users.body.users[0].id } as User
})
afterAll(() => app.close())

const plan = { mutations: [], source: [], message: () => '' }
const bodyOf = (err: Error) => (err as RefusalError).toBody()

describe('terminal apply failures the server cannot read', () => {
  it('answers retry:true, partialApply:false when the key holds no record: nothing committed', async () => {
    const err = await applyError(app.deps, user, 'workflow:none', plan, new Error('connection reset'))
    expect([(err as RefusalError).status, bodyOf(err)]).toEqual([
      500,
      {
        error: 'The apply failed before anything was written',
        retry: true,
        partialApply: false,
        _meta: { _tip: 'Nothing was written; re-call advance with the same state.' },
      },
    ])
  })

  it('answers alreadyApplied when the record says the apply committed', async () => {
    await app.db.query(claimSql, [user.id, 'workflow:landed', 'h'])
    await app.db.query(completeSql, [user.id, 'workflow:landed', 200, JSON.stringify({ done: true, changeset: [{ nodeId: 'job-1' }] })])
    const err = await applyError(app.deps, user, 'workflow:landed', plan, new Error('socket closed after commit'))
    expect(bodyOf(err)).toEqual({
      error: 'The apply landed, but its answer was lost',
      retry: false,
      partialApply: false,
      alreadyApplied: true,
      changeset: [{ nodeId: 'job-1' }],
      _meta: { _tip: 'Read GET /api/v1/nodes for the ids; do not retry.' },
    })
  })

  it('answers retry:false, partialApply:true when the database cannot say whether it committed', async () => {
    const gone = await startApp()
    await gone.db.close()
    const err = await applyError(gone.deps, user, 'workflow:unknown', plan, new Error('connection lost during commit'))
    expect(bodyOf(err)).toEqual({
      error: 'The apply failed and its outcome is unknown',
      retry: false,
      partialApply: true,
      _meta: { _tip: 'Part of the changes may be committed. Read GET /api/v1/nodes and reconcile before doing anything else.' },
    })
  })
})
