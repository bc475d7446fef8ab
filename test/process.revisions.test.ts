import { describe, expect, it } from 'bun:test'
import { replicas, type ServerProcess } from './process'

// live.md, 1 across real server processes: ten writers send the same ifRev for one field at
// once, spread over two replicas on one PostgreSQL database (replicas need PostgreSQL; the
// same race within one process, on both databases, is in test/revisions.test.ts).
const onPostgres = !!process.env.TEST_DATABASE_URL

async function planWithJob(srv: ServerProcess, projectId: string): Promise<string> {
  const made = await srv.call('POST', '/api/v1/mutate', { body: { action: 'addProject', project: { name: projectId, id: projectId } } })
  expect(made.status).toBe(200)
  const seeded = await srv.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId,
      mutations: [
        { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'G' } } },
        { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'N' } } },
        { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'A' } } },
        { action: 'add', node: { type: 'job', parentId: 'draft-a', data: { label: 'J' } } },
      ],
    },
  })
  expect(seeded.status).toBe(200)
  return seeded.body.results[3].node.rev
}

describe.skipIf(!onPostgres)('ifRev across two replicas on one PostgreSQL database', () => {
  const pair = replicas()

  it('lets exactly one of ten concurrent writers with one ifRev win; the others hear who did', async () => {
    const rev = await planWithJob(pair.a, 'stale-replicas')
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? pair.a : pair.b).call('POST', '/api/v1/mutate', {
          body: { action: 'update', projectId: 'stale-replicas', nodeId: 'job-1', data: { description: `writer ${i}` }, ifRev: rev },
        }),
      ),
    )
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409])
    const won = answers.find((r) => r.status === 200)!.body.node
    for (const lost of answers.filter((r) => r.status === 409)) {
      expect(lost.body.error).toBe('stale_write')
      expect(lost.body.conflicts).toEqual([expect.objectContaining({ field: 'description', theirs: won.data.description })])
      expect(lost.body.current[0].rev).toBe(won.rev)
    }
    // both replicas read the winner's text and rev
    for (const srv of [pair.a, pair.b]) {
      const nodes = (await srv.call('GET', '/api/v1/nodes?projectId=stale-replicas')).body.nodes
      expect(nodes.find((n: { id: string }) => n.id === 'job-1')).toMatchObject({
        rev: won.rev,
        data: { description: won.data.description },
      })
    }
  })

  it('lets five concurrent writers of five different fields based on one rev all land', async () => {
    const rev = await planWithJob(pair.b, 'fields-replicas')
    const fields = ['description', 'notes', 'maturity', 'label', 'iteration']
    const values: Record<string, string> = { description: 'd', notes: 'n', maturity: 'mvp', label: 'L', iteration: 'Later' }
    const answers = await Promise.all(
      fields.map((f, i) =>
        (i % 2 ? pair.a : pair.b).call('POST', '/api/v1/mutate', {
          body: { action: 'update', projectId: 'fields-replicas', nodeId: 'job-1', data: { [f]: values[f] }, ifRev: rev },
        }),
      ),
    )
    expect(answers.map((r) => [r.status, r.body.error])).toEqual(fields.map(() => [200, undefined]))
    const job = (await pair.a.call('GET', '/api/v1/nodes?projectId=fields-replicas')).body.nodes.find(
      (n: { id: string }) => n.id === 'job-1',
    )
    expect(job.data).toMatchObject(values)
  })
})
