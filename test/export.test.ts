import { afterAll, describe, expect, it } from 'bun:test'
import { posix } from 'node:path'
import { parse } from 'yaml'
import { startApp } from './helpers'

// api.md GET /export-okf: one file per node under the right folder, index.md with okf_version 0.1
// listing every concept by type, YAML frontmatter, relative markdown links, access rules.
const app = await startApp()
afterAll(() => app.close())

const mutate = async (body: Record<string, unknown>) => {
  const res = await app.call('POST', '/api/v1/mutate', { body })
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  return res.body
}
const exportOf = (projectId: string, key?: string) => app.call('GET', `/api/v1/export-okf?projectId=${projectId}`, { key })

/** Frontmatter parsed with a YAML library, and the markdown after it. */
function split(file: string): { meta: Record<string, any>; body: string } {
  const m = /^---\n([\s\S]*?\n)---\n([\s\S]*)$/.exec(file)
  if (!m) throw new Error(`no frontmatter in:\n${file}`)
  return { meta: parse(m[1]!), body: m[2]! }
}
/** Every markdown link target of a file, resolved against the file's folder. */
const links = (path: string, body: string) =>
  [...body.matchAll(/\]\(([^)]+)\)/g)].map((m) => posix.normalize(posix.join(posix.dirname(path), m[1]!)))

const TRICKY = 'Launch: "v2" — it\'s #1\n---\nkey: value & *ref !tag [x] {y} | > % @ `z`'

async function seeded() {
  const p = await app.project()
  const add = async (node: unknown) => (await mutate({ action: 'add', projectId: p, node })).node
  await add({ type: 'goal', data: { label: TRICKY, description: 'Line one\nline two: with colon', goalStatus: 'focus' } })
  await add({ type: 'need', parentId: 'goal-1', data: { label: 'Teams: share plans' } })
  await add({
    type: 'approach',
    parentId: 'need-1',
    data: {
      label: 'Workspaces',
      kano: 'must-have',
      size: 'car',
      approachStatus: 'validation',
      measure: 'weekly active teams',
      notes: 'private thoughts',
    },
  })
  await add({ type: 'approach', parentId: 'need-1', data: { label: 'Invites [beta]', blockedBy: ['approach-1'] } })
  await mutate({ action: 'addIteration', projectId: p, iteration: { name: 'S1' } })
  await add({ type: 'job', parentId: 'approach-1', data: { label: 'Two editors', maturity: 'mvp', iteration: 'S1' } })
  await mutate({ action: 'update', projectId: p, nodeId: 'job-1', data: { status: 'done' } })
  await add({ type: 'goal', data: { label: 'Retain' } })
  await add({ type: 'task', data: { label: 'Fix login today' } })
  await mutate({ action: 'update', projectId: p, nodeId: 'task-1', data: { kind: 'do-it', urgent: true } })
  return p
}

describe('GET /export-okf', () => {
  it('writes one file per node under its folder plus index.md', async () => {
    const p = await seeded()
    const res = await exportOf(p)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ okf_version: '0.1', project: { id: p, name: p }, file_count: 8 })
    expect(Object.keys(res.body.files).sort()).toEqual(
      [
        'index.md',
        'goals/goal-1.md',
        'goals/goal-2.md',
        'needs/need-1.md',
        'approaches/approach-1.md',
        'approaches/approach-2.md',
        'jobs/job-1.md',
        'tasks/task-1.md',
      ].sort(),
    )
  })

  it('declares okf_version 0.1 in index.md and lists every concept by type', async () => {
    const p = await seeded()
    const { files } = (await exportOf(p)).body
    const { meta, body } = split(files['index.md'])
    expect(meta).toEqual({ okf_version: 0.1, type: 'Index', title: p, project: p, timestamp: expect.any(String) })
    const headings = [...body.matchAll(/^## (.+)$/gm)].map((m) => m[1])
    expect(headings).toEqual(['Goals', 'Needs', 'Approaches', 'Jobs', 'Tasks'])
    expect(links('index.md', body).sort()).toEqual(
      Object.keys(files)
        .filter((f) => f !== 'index.md')
        .sort(),
    )
  })

  it('writes frontmatter that parses back to the exact values, whatever the label holds', async () => {
    const p = await seeded()
    const { files } = (await exportOf(p)).body
    const tree = (await app.call('GET', `/api/v1/tree?projectId=${p}&nodeId=goal-1&direction=down`)).body.nodes
    const goal = split(files['goals/goal-1.md'])
    expect(goal.meta).toEqual({
      type: 'Goal',
      title: TRICKY,
      description: 'Line one\nline two: with colon',
      timestamp: tree[0].createdAt,
      goalStatus: 'focus',
      id: 'goal-1',
    })
    expect(split(files['approaches/approach-1.md']).meta).toEqual({
      type: 'Approach',
      title: 'Workspaces',
      timestamp: expect.any(String),
      kano: 'must-have',
      size: 'car',
      approachStatus: 'validation',
      measure: 'weekly active teams',
      id: 'approach-1',
    })
    expect(split(files['jobs/job-1.md']).meta).toEqual({
      type: 'Job',
      title: 'Two editors',
      timestamp: expect.any(String),
      status: 'done',
      maturity: 'mvp',
      iteration: 'S1',
      id: 'job-1',
    })
    expect(split(files['tasks/task-1.md']).meta).toMatchObject({
      type: 'Task',
      title: 'Fix login today',
      kind: 'do-it',
      urgent: true,
      iteration: 'Later',
    })
    expect(split(files['needs/need-1.md']).meta).toMatchObject({ type: 'Need', title: 'Teams: share plans' })
    for (const file of Object.values<string>(files)) expect(() => split(file)).not.toThrow()
  })

  it('links parent, blockedBy and children as relative links to files that exist', async () => {
    const p = await seeded()
    const { files } = (await exportOf(p)).body
    const bet = split(files['approaches/approach-2.md']).body
    expect(bet).toContain('## Parent\n\n- [Teams: share plans](../needs/need-1.md)')
    expect(bet).toContain('## Blocked by\n\n- [Workspaces](../approaches/approach-1.md)')
    const need = split(files['needs/need-1.md']).body
    expect(need).toContain(
      '## Children\n\n- [Workspaces](../approaches/approach-1.md)\n- [Invites \\[beta\\]](../approaches/approach-2.md)',
    )
    expect(split(files['approaches/approach-1.md']).body).toContain('## Notes\n\nprivate thoughts')
    for (const [path, file] of Object.entries<string>(files))
      for (const target of links(path, split(file).body)) expect(Object.keys(files)).toContain(target)
  })

  it('exports an empty project as index.md alone', async () => {
    const p = await app.project()
    const res = await exportOf(p)
    expect(res.body.file_count).toBe(1)
    expect(split(res.body.files['index.md']).meta.okf_version).toBe(0.1)
  })

  it('refuses a project the key cannot read with 403 project_access_denied and an unknown project with 400', async () => {
    const p = await app.project()
    const stranger = await app.user()
    const denied = await exportOf(p, stranger.key)
    expect(denied.status).toBe(403)
    expect(denied.body).toEqual({ error: 'project_access_denied', message: 'API key does not have access to this project' })
    const unknown = await exportOf('no-such-project')
    expect(unknown.status).toBe(400)
    expect(unknown.body).toEqual({ error: 'unknown_project', message: 'Project no-such-project not found' })
  })
})
