import { afterAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { TObject, TSchema } from '@sinclair/typebox'
import { checkInput } from '../src/http/action-schema'
import { IterationsParams, IterationsQuery } from '../src/iterations/model'
import { NodesParams, NodesQuery } from '../src/nodes/input'
import { SearchParams, SearchQuery } from '../src/search/model'
import { OutlineParams, OutlineQuery, TreeOutlineQuery, TreeParams, TreeWalkQuery } from '../src/tree/model'
import { ReadyParams, ReadyQuery } from '../src/work/model'
import { startApp } from './helpers'

// docs/validation.md: one way to check input (checkInput after the access check), 403 before 400
const app = await startApp()
afterAll(() => app.close())

const SRC = join(import.meta.dir, '..', 'src')
const routeFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? routeFiles(join(dir, e.name)) : e.name === 'routes.ts' ? [join(dir, e.name)] : [],
  )

describe('one way to check input', () => {
  it('leaves no query or body schema for Elysia to check before the service', () => {
    const checked = routeFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/^\s*(query|body): /.test(line) ? [`${relative(SRC, file)}:${i + 1}`] : [])),
    )
    expect(checked).toEqual([])
  })

  it('answers a caller without access 403 before any 400 about a value', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const reads = [`/api/v1/ready?projectId=${p}&limit=0`, `/api/v1/nodes?projectId=${p}&type=epic`, `/api/v1/events?projectId=${p}&wait=x`]
    for (const path of reads) {
      const denied = await app.call('GET', path, { key: stranger.key })
      expect([path, denied.status, denied.body.error]).toEqual([path, 403, 'project_access_denied'])
      expect([path, (await app.call('GET', path)).status]).toEqual([path, 400])
    }
    const share = { projectId: p, settings: 'all' }
    expect((await app.call('POST', '/api/v1/share', { key: stranger.key, body: share })).body).toEqual({ error: 'Not your project' })
    expect((await app.call('POST', '/api/v1/share', { body: share })).status).toBe(400)
    const unknownName = await app.call('GET', `/api/v1/iterations?projectId=${p}&stauts=done`, { key: stranger.key })
    expect(unknownName.status).toBe(403)
  })

  it('answers a write of a caller without access 403 before any 400 about its body (POST /mutate)', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const bodies = [
      { action: 'add', projectId: p, node: { type: 'epic', data: { label: 'x' } } },
      { action: 'update', projectId: p, nodeId: 'goal-1', data: { status: 'sideways' } },
      { action: 'batch', projectId: p, mutations: 'all of them' },
      { action: 'claim', projectId: p, agent: '' },
      { action: 'addIteration', projectId: p, iteration: { name: 7 } },
      { action: 'revert', projectId: p, changeIds: 'latest' },
      { action: 'propose', projectId: p },
    ]
    for (const body of bodies) {
      const denied = await app.call('POST', '/api/v1/mutate', { key: stranger.key, body })
      expect([body.action, denied.status, denied.body.error]).toEqual([body.action, 403, 'project_access_denied'])
      // the owner, who may write there, hears what is wrong with the body
      expect([body.action, (await app.call('POST', '/api/v1/mutate', { body })).status]).toEqual([body.action, 400])
    }
  })

  it('answers a workflow call of a caller without access 403 before any 400 about its body (POST /workflow)', async () => {
    const p = await app.project()
    const stranger = await app.user()
    for (const body of [
      { projectId: p, action: 'finish' },
      { projectId: p, action: 'start', flow: 'nope' },
      { projectId: p, action: 'advance' },
    ]) {
      const denied = await app.call('POST', '/api/v1/workflow', { key: stranger.key, body })
      expect([body.action, denied.status, denied.body.error]).toEqual([body.action, 403, 'project_access_denied'])
      expect([body.action, (await app.call('POST', '/api/v1/workflow', { body })).status]).toEqual([body.action, 400])
    }
  })

  it('refuses a missing projectId with 400 (there is no project to ask about), every plain mistake at once', async () => {
    const res = await app.call('GET', '/api/v1/ready?projectID=p&limit=5')
    expect(res.status).toBe(400)
    expect(res.body).toEqual({
      success: false,
      errors: ['projectId is required', "projectID: Property 'projectID' should not be provided"],
      _meta: { _tip: 'The query string has `projectID`: did you mean `projectId`?' },
    })
  })

  it('refuses a body that is no JSON object the same way on every route', async () => {
    for (const path of ['/api/v1/feedback', '/api/v1/presence', '/api/v1/webhooks', '/api/v1/mutate', '/api/v1/view-command']) {
      const res = await app.call('POST', path, { body: [1] })
      expect([path, res.status, res.body.errors]).toEqual([
        path,
        400,
        ['Request body must be a JSON object (Content-Type: application/json)'],
      ])
    }
  })

  it("documents each typed read parameter as its query's checker reads it: the same names, bounds, values", () => {
    const p = { projectId: 'p' }
    const reads: { params: TObject; query: TObject; base: Record<string, string>; names?: string[] }[] = [
      { params: NodesParams, query: NodesQuery, base: p },
      { params: ReadyParams, query: ReadyQuery, base: p },
      { params: SearchParams, query: SearchQuery, base: { ...p, q: 'churn' } },
      { params: IterationsParams, query: IterationsQuery, base: p },
      { params: OutlineParams, query: OutlineQuery, base: p },
      // GET /tree documents a walk's parameters and an outline's in one
      { params: TreeParams, query: TreeOutlineQuery, base: { ...p, format: 'outline' }, names: ['nodeId', 'format', 'budget'] },
      { params: TreeParams, query: TreeWalkQuery, base: { ...p, nodeId: 'goal-1', direction: 'up' }, names: ['nodeId', 'direction'] },
    ]
    const passes = (query: TObject, value: Record<string, string>) => {
      try {
        checkInput('query', query, value)
        return true
      } catch {
        return false
      }
    }
    for (const { params, query, base, names } of reads) {
      if (!names) {
        expect(Object.keys(params.properties)).toEqual(Object.keys(query.properties))
        expect(params.required).toEqual(query.required)
      }
      for (const name of names ?? Object.keys(params.properties)) {
        const typed = params.properties[name] as TSchema
        const values: unknown[] | null = typed.anyOf ? typed.anyOf.map((v: TSchema) => v.const) : 'const' in typed ? [typed.const] : null
        const [good, bad] =
          typed.type === 'integer'
            ? [
                [typed.minimum, typed.maximum],
                [typed.minimum - 1, typed.maximum + 1, 1.5],
              ]
            : typed.type === 'boolean'
              ? [
                  ['true', 'false'],
                  ['yes', '1'],
                ]
              : values
                ? [values, ['none-of-these']]
                : [['x'], []]
        for (const v of good) expect([name, v, passes(query, { ...base, [name]: String(v) })]).toEqual([name, v, true])
        for (const v of bad) expect([name, v, passes(query, { ...base, [name]: String(v) })]).toEqual([name, v, false])
      }
    }
  })
})
