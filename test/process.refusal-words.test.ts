import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { ErrorListError } from '../src/errors'
import { parseAction } from '../src/http/action-schema'
import { NodesQuery } from '../src/nodes/input'
import { type ServerProcess, startServer } from './process'

/**
 * docs/validation.md, "The refusal", seen from outside through the real server process: a part
 * without a message of its own is worded by one function (`partRefusal`) whichever door checked
 * it (`checkInput` for a query string or a body, `parseAction` for POST /mutate's action bodies),
 * and a misspelt top-level name gets one tip (`misspeltKeyTip`) through a query string and
 * through POST /mutate's body. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */
let server: ServerProcess
let guide: string
const P = 'alpha'

beforeAll(async () => {
  server = await startServer()
  const made = await server.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { id: P, name: 'Alpha' } } })
  expect(made.status).toBe(200)
  guide = (await server.call('GET', `/api/v1/nodes?projectId=${P}&type=epic`)).body._meta.guide
  expect(guide).toContain('http')
}, 60_000)
afterAll(() => server?.close())

/** The errors `parseAction`, POST /mutate's checker, gives the same input against the same schema. */
function parseActionErrors(schema: Parameters<typeof parseAction>[0], value: unknown): string[] {
  try {
    parseAction(schema, value)
  } catch (err) {
    if (err instanceof ErrorListError) return err.errors
    throw err
  }
  throw new Error('parseAction took the input')
}

describe('a part without a message of its own', () => {
  it("GET /nodes' unknown name is worded as parseAction words it", async () => {
    const res = await server.call('GET', `/api/v1/nodes?projectId=${P}&tpye=goal`)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, errors: ["tpye: Property 'tpye' should not be provided"], _meta: { guide } })
    expect(parseActionErrors(NodesQuery, { projectId: P, tpye: 'goal' })).toEqual(res.body.errors)
  })

  it('a body part inside a list has its path with the item in brackets, as parseAction writes it', async () => {
    const res = await server.call('POST', '/api/v1/keys', { body: { scope: { role: 'read', projects: [P, 5] } } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ["scope.projects[1]: Expected property 'scope.projects[1]' to be string but found: 5"],
    })
  })

  it('several broken names of a query string are all named, each in the same words', async () => {
    const res = await server.call('GET', `/api/v1/nodes?projectID=${P}&tpye=goal`)
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual([
      'projectId is required',
      "projectID: Property 'projectID' should not be provided",
      "tpye: Property 'tpye' should not be provided",
    ])
  })
})

describe('a misspelt top-level name', () => {
  const tip = (where: string) => `${where} has \`projectID\`: did you mean \`projectId\`?`

  it('gets the same tip through a query string and through POST /mutate (403 first there, the tip inside its own)', async () => {
    const read = await server.call('GET', `/api/v1/nodes?projectID=${P}`)
    expect(read.status).toBe(400)
    expect(read.body._meta._tip).toBe(tip('The query string'))

    const write = await server.call('POST', '/api/v1/mutate', { body: { action: 'renameProject', projectID: P, name: 'x' } })
    expect(write.status).toBe(403)
    expect(write.body.error).toBe('project_access_denied')
    expect(write.body._meta._tip).toStartWith(`projectId is missing: ${tip('the body')} send the id`)
  })

  it("POST /mutate's 400 for a missing part opens its tip with the same sentence", async () => {
    const res = await server.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: P, nod: { type: 'goal', data: { label: 'x' } } },
    })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual(['node is required: {type, parentId?, data:{label, ...}}'])
    expect(res.body._meta._tip).toStartWith('The body has `nod`: did you mean `node`? Send {action:"add"')
  })
})
