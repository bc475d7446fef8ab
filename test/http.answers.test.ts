import { afterAll, describe, expect, it } from 'bun:test'
import { findJsonSyntaxError } from '../src/http/json-syntax'
import { startApp } from './helpers'

// Answers that say what to fix (issue 55): a known path with the wrong method is 405 with Allow,
// a body that is not JSON says where and what, a misspelt top-level key is named in the tip.
const app = await startApp()
afterAll(() => app.close())
const GUIDE = 'http://arbor.test/api/v1/guide'

describe('a known path with a method it does not take', () => {
  it.each([
    ['GET', '/api/v1/mutate', 'POST', 'POST'],
    ['GET', '/api/mutate', 'POST', 'POST'],
    ['POST', '/api/v1/projects', 'GET, HEAD, PATCH', 'GET or PATCH'],
    ['PUT', '/api/v1/projects', 'GET, HEAD, PATCH', 'GET or PATCH'],
    ['DELETE', '/api/v1/tier-status', 'GET, HEAD', 'GET'],
    ['POST', '/api/v1/tier-status', 'GET, HEAD', 'GET'],
  ])('%s %s answers 405 with Allow: %s', async (method, path, allow, send) => {
    const res = await app.call(method, path, { body: method === 'GET' || method === 'DELETE' ? undefined : {} })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe(allow)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    const canonical = path.replace('/api/mutate', '/api/v1/mutate')
    expect(res.body).toEqual({
      error: 'method_not_allowed',
      message: `${canonical} answers ${allow.replace(', HEAD', '')}, not ${method}`,
      _meta: { _tip: `Send ${send} ${canonical}; see ${GUIDE}.` },
    })
  })

  it('a path with a parameter is matched by its pattern', async () => {
    const res = await app.call('POST', '/api/v1/public/share/some-token', { body: {} })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
  })

  it('a path nothing serves stays 404 unknown_endpoint', async () => {
    const res = await app.call('POST', '/api/v1/mutates', { body: {} })
    expect(res.status).toBe(404)
    expect(res.headers.get('allow')).toBeNull()
    expect(res.body.error).toBe('unknown_endpoint')
  })
})

describe('a body with a JSON syntax error', () => {
  it.each([
    [
      '{"action": "renameProject",\n "projectId": x}',
      2,
      15,
      42,
      "expected a value (an object, array, string, number, true, false or null), found 'x'",
    ],
    ['{"action": "add" "projectId": "p"}', 1, 18, 17, "expected ',' or '}' after a property value, found '\"'"],
    ["{'action': 'add'}", 1, 2, 1, "expected a property name in double quotes, found '''"],
    ['{"action": "add",}', 1, 18, 17, "expected a property name in double quotes (no comma before }), found '}'"],
    ['{"a": [1, 2,]}', 1, 13, 12, "expected a value (no comma before ]), found ']'"],
    [
      '{"a": "tab\there"}',
      1,
      11,
      10,
      'expected a character of a string (a control character must be escaped, e.g. \\n), found the control character U+0009',
    ],
    ['{"a": 1} {"b": 2}', 1, 10, 9, "expected nothing after the JSON value, found '{'"],
    ['{"a": tru}', 1, 7, 6, "expected a value (an object, array, string, number, true, false or null), found 'tru'"],
    ['{"a": "\\x"}', 1, 9, 8, "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX), found 'x'"],
  ])('%j: line %d, column %d, offset %d, and what', async (text, line, column, offset, problem) => {
    const res = await app.call('POST', '/api/v1/mutate', { body: text })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: [`Request body is not valid JSON: at line ${line}, column ${column} (offset ${offset}), ${problem}`],
      _meta: { guide: GUIDE },
    })
  })

  it('the scan finds nothing wrong in what JSON.parse takes', () => {
    for (const text of ['{}', '[]', ' {"a": [1, -2.5e3, "x\\u00e9\\n", true, false, null, {"b": {}}]} ', '"s"', '0', '-0.1E+2'])
      expect(findJsonSyntaxError(text)).toBeNull()
  })
})

describe('a JSON body is parsed once', () => {
  it('the router gets the value the wrapper parsed: Request.json() is never called on the way in', async () => {
    const projectId = await app.project()
    // counted on the prototype: Bun's types declare json() read-only
    const proto = Request.prototype as { json: (this: Request) => Promise<unknown> }
    const json = proto.json
    let calls = 0
    proto.json = function (this: Request) {
      calls++
      return json.call(this)
    }
    try {
      const res = await app.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId, node: { type: 'goal', data: { label: 'parsed once' } } },
      })
      expect(res.status).toBe(200)
      expect(res.body.node.data.label).toBe('parsed once')
      // a form body is not the wrapper's to parse: Elysia reads it, and POST /mutate says how it was read
      const form = await app.call('POST', '/api/v1/mutate', {
        body: 'action=add',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expect(form.status).toBe(400)
      expect(form.body.errors[0]).toStartWith('The body was not read as JSON')
    } finally {
      proto.json = json
    }
    expect(calls).toBe(0)
  })
})

describe('a body that is no JSON object, on a route beside POST /mutate', () => {
  it('is named by how it was sent: as text, by its Content-Type; as JSON, as no object', async () => {
    // the checker refuses the body as a whole (src/http/action-schema.ts); the plugin names a body not sent as JSON by its header
    const text = await app.call('POST', '/api/v1/feedback', { body: 'kind=note', headers: { 'content-type': 'text/plain' } })
    expect([text.status, text.body.success, text.body.errors]).toEqual([
      400,
      false,
      ['The body was not read as JSON: it came with Content-Type text/plain; send it with Content-Type: application/json'],
    ])
    const list = await app.call('POST', '/api/v1/feedback', { body: [1] })
    expect([list.status, list.body.errors]).toEqual([400, ['Request body must be a JSON object (Content-Type: application/json)']])
  })
})

describe('a misspelt top-level key', () => {
  it('projectID is named in the tip: did you mean projectId?', async () => {
    const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'renameProject', projectID: await app.project(), name: 'x' } })
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: 'project_access_denied',
      message: 'API key does not have access to this project',
      _meta: {
        _tip: 'projectId is missing: the body has `projectID`: did you mean `projectId`? send the id of one of your projects in the body; GET /api/v1/projects lists them.',
        guide: GUIDE,
      },
    })
  })

  it('a required field misspelt (nod for node) is named in the tip', async () => {
    const res = await app.call('POST', '/api/v1/mutate', {
      body: { action: 'add', projectId: await app.project(), nod: { type: 'goal', data: { label: 'x' } } },
    })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ['node is required: {type, parentId?, data:{label, ...}}'],
      _meta: {
        _tip: 'The body has `nod`: did you mean `node`? Send {action:"add", projectId, node:{type:"goal", data:{label:"…"}}}',
        guide: GUIDE,
      },
    })
  })

  it('a route checked by its schema names the misspelt key too, in the query string or the body', async () => {
    const project = await app.project()
    const nodes = await app.call('GET', `/api/v1/nodes?projectID=${project}`)
    expect(nodes.status).toBe(400)
    expect(nodes.body).toEqual({
      success: false,
      errors: ['projectId is required', "projectID: Property 'projectID' should not be provided"],
      _meta: { _tip: 'The query string has `projectID`: did you mean `projectId`?', guide: GUIDE },
    })
    const hook = await app.call('POST', '/api/v1/webhooks', { body: { projectID: project, url: 'https://example.com/hook' } })
    expect(hook.status).toBe(400)
    expect(hook.body._meta).toEqual({ _tip: 'The body has `projectID`: did you mean `projectId`?' })
    const far = await app.call('GET', `/api/v1/nodes?pid=${project}`)
    expect(far.body._meta).toEqual({ guide: GUIDE })
  })

  it('no tip about a key when none is close', async () => {
    const res = await app.call('POST', '/api/v1/mutate', { body: { action: 'renameProject', name: 'x' } })
    expect(res.body._meta._tip).toStartWith('projectId is missing: send the id')
  })
})
