import { afterAll, describe, expect, it } from 'bun:test'
import { ADMIN_TOKEN } from './helpers'
import { type ServerProcess, startServer } from './process'

// Issue 50, item 3, the import's case, through the real server (PGlite, or PostgreSQL with
// TEST_DATABASE_URL): an import writes in chunks, each its own short transaction, so another
// tenant's reads and writes are answered while it runs; its project is nobody's to see until the
// last chunk commits; a failure part-way, or a SIGKILL part-way and a restart, leaves nothing.
const server = await startServer()
afterAll(() => server.close())

const node = (meta: string, body = '# x\n') => `---\n${meta}\n---\n\n${body}`
/** a bundle of `tasks` tasks titled `title`; `last` replaces the last task's file */
function bundle(title: string, tasks: number, last?: string) {
  const files: Record<string, string> = { 'index.md': node(`okf_version: 0.1\ntype: Index\ntitle: ${title}`) }
  for (let i = 1; i <= tasks; i++) files[`tasks/task-${i}.md`] = node(`type: Task\ntitle: Task ${i}\nid: task-${i}`, `# Task ${i}\n`)
  if (last !== undefined) files[`tasks/task-${tasks}.md`] = last
  return files
}
/** the project id of the import whose project is named `prefix`-…, from the server's progress line */
const importing = (s: ServerProcess, prefix: string) =>
  s.until(
    async () => new RegExp(`"msg":"import progress".*?"projectId":"(${prefix}-[a-z0-9]+)"`).exec(s.output())?.[1],
    60_000,
    `a progress line of the ${prefix} import`,
  )
const projectIds = async (s: ServerProcess, key?: string) =>
  ((await s.call('GET', '/api/v1/projects', { key })).body.projects as { id: string }[]).map((p) => p.id)
/** what the import left of a project it did not finish: its id is free again, and a new project of that id has no history nor events */
async function nothingLeftOf(s: ServerProcess, projectId: string) {
  const added = await s.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: 'again', id: projectId } } })
  if (added.status !== 200) return false
  expect((await s.call('GET', `/api/v1/history?projectId=${projectId}`)).body.changes).toEqual([])
  expect((await s.call('GET', `/api/v1/events?projectId=${projectId}`)).body.events).toEqual([])
  expect((await s.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes).toEqual([])
  return true
}

describe('an import in chunks', () => {
  it('lets another tenant read and write while it runs, and shows its project only once it is whole', async () => {
    const other = await server.call('POST', '/admin/v1/users', { key: ADMIN_TOKEN, body: { name: 'Other', tier: 'team' } })
    expect(other.status).toBe(201)
    const otherKey = other.body.apiKey as string
    const mine = { action: 'addProject', project: { name: 'Theirs', id: 'theirs' } }
    expect((await server.call('POST', '/api/v1/mutate', { key: otherKey, body: mine })).status).toBe(200)

    let done = false
    // PostgreSQL writes an import in 1,000-entry chunks without pausing (others run beside them): a
    // larger bundle there, so that the import still runs while the other tenant's requests are made
    const tasks = process.env.TEST_DATABASE_URL ? 8000 : 1500
    const imported = server.call('POST', '/api/v1/import-okf', { body: { files: bundle('Big', tasks) } }).finally(() => (done = true))
    const projectId = await importing(server, 'big')
    // from outside, while the import has not answered: the other tenant is served, the project is hidden
    let othersServed = 0
    let hiddenSeen = 0
    for (let n = 0; !done; n++) {
      const add = await server.call('POST', '/api/v1/mutate', {
        key: otherKey,
        body: { action: 'add', projectId: 'theirs', node: { type: 'task', data: { label: `meanwhile ${n}` } } },
      })
      const read = await server.call('GET', '/api/v1/nodes?projectId=theirs', { key: otherKey })
      expect([add.status, read.status]).toEqual([200, 200])
      const listed = (await projectIds(server)).includes(projectId)
      const owners = await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)
      const write = await server.call('POST', '/api/v1/mutate', {
        body: { action: 'add', projectId, node: { type: 'task', data: { label: 'too early' } } },
      })
      const others = await server.call('GET', `/api/v1/nodes?projectId=${projectId}`, { key: otherKey })
      if (done) break // answered after the import: they say nothing about while it ran
      othersServed++
      expect(listed).toBe(false)
      expect([owners.status, owners.body.error, write.status, write.body.error]).toEqual([
        409,
        'project_importing',
        409,
        'project_importing',
      ])
      expect([others.status, others.body.error]).toEqual([403, 'project_access_denied'])
      hiddenSeen++
    }
    expect(othersServed).toBeGreaterThan(0)
    expect(hiddenSeen).toBeGreaterThan(0)

    const answer = await imported
    expect([answer.status, answer.body.project.id, answer.body.nodes]).toEqual([200, projectId, tasks])
    expect(await projectIds(server)).toContain(projectId)
    const nodes = (await server.call('GET', `/api/v1/nodes?projectId=${projectId}`)).body.nodes as { id: string; data: { label: string } }[]
    // the loop's last write may have been answered once the import was done: it is no import's
    const importedNodes = nodes.filter((n) => n.data.label !== 'too early')
    expect(nodes.length - importedNodes.length).toBeLessThanOrEqual(1)
    expect(importedNodes.map((n) => n.id).sort()).toEqual(Array.from({ length: tasks }, (_, i) => `task-${i + 1}`).sort())
    // one request of the history, however many chunks it took
    const added = async (nodeId: string) =>
      (
        (await server.call('GET', `/api/v1/history?projectId=${projectId}&nodeId=${nodeId}`)).body.changes as {
          action: string
          requestId: string
        }[]
      ).find((c) => c.action === 'add')!.requestId
    expect(await added(`task-${tasks}`)).toBe(await added('task-1')) // the first chunk's and the last's
    const first = (await server.call('GET', `/api/v1/events?projectId=${projectId}&limit=1`)).body.events
    expect(first[0].event).toBe('node.added')
    expect((await server.call('GET', `/api/v1/nodes?projectId=${projectId}`, { key: otherKey })).status).toBe(403)
  }, 300_000)

  it('removes all it wrote when a late chunk is refused, and says so', async () => {
    // the last task names a parent the bundle does not hold: refused in the import's last chunks
    const last = node('type: Task\ntitle: Orphan\nid: task-600', '# Orphan\n\n## Parent\n\n- [Nowhere](../jobs/job-999.md)\n')
    const answer = await server.call('POST', '/api/v1/import-okf', { body: { files: bundle('Broken', 600, last) } })
    const projectId = await importing(server, 'broken')
    expect(answer.status).toBe(400)
    expect(answer.body.success).toBe(false)
    expect(answer.body._meta._tip).toStartWith(`Nothing of this import was kept: project ${projectId} and the `)
    expect(await projectIds(server)).not.toContain(projectId)
    expect(await nothingLeftOf(server, projectId)).toBe(true)
  }, 300_000)
})

describe('an import cut short by SIGKILL', () => {
  it('leaves nothing once the server is back', async () => {
    // a lease of 5 s, not the minute of the default, so that PostgreSQL's wait for it to run out is
    // short; the cleanup loop then runs every 5 s (a chunk moves the lease on well within it)
    const lease = { IMPORT_LEASE_SECONDS: '5' }
    const first = await startServer(lease)
    const killed: ServerProcess[] = [first]
    try {
      void first.call('POST', '/api/v1/import-okf', { body: { files: bundle('Killed', 1500) } }).catch(() => {})
      const projectId = await importing(first, 'killed')
      first.proc.kill('SIGKILL')
      await first.proc.exited
      const again = await startServer(lease, first)
      killed.push(again)
      expect(await projectIds(again)).not.toContain(projectId)
      // on PGlite at once; on PostgreSQL once the import's lease ran out (within 5 s of the kill, at
      // the loop's next run after that)
      await again.until(() => nothingLeftOf(again, projectId), 180_000, `project ${projectId} removed`)
      expect(again.output()).toContain('import: removed the project of an import that never finished')
    } finally {
      for (const s of killed.reverse()) await s.close() // the restart's first, then the first's, which drops the database
    }
  }, 300_000)
})
