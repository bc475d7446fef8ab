import { expect, test } from 'bun:test'
import { doctor } from '../src/cli/doctor'
import { startApp } from './helpers'

// issue 57: after a first start or a change of model, `arbor doctor` says how far the background
// embedding is. With no server running it reads the database itself, for the embedder this
// configuration picks (here an OpenAI-compatible one: its id needs no model files, and nothing
// is asked of the endpoint). The running-server path (GET /metrics) is in process.cli.test.ts.

async function doctorLines(env: Record<string, string>): Promise<string[]> {
  const lines: string[] = []
  const log = console.log
  console.log = (line: unknown) => lines.push(String(line))
  try {
    await doctor({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env })
  } finally {
    console.log = log
  }
  return lines.join('\n').split('\n')
}

test('arbor doctor without a server: projects and nodes still waiting for the embedder in use, from the database', async () => {
  const app = await startApp({}, { persist: true })
  const projectId = await app.project()
  const res = await app.call('POST', '/api/v1/mutate', {
    body: {
      action: 'batch',
      projectId,
      mutations: [1, 2, 3].map((i) => ({ action: 'add', node: { id: `draft-${i}`, type: 'task', data: { label: `Task ${i}` } } })),
    },
  })
  expect(res.status).toBe(200)
  await app.project() // a project without nodes has nothing to embed
  await app.close()
  const where: Record<string, string> = app.store.pgUrl ? { DATABASE_URL: app.store.pgUrl } : { DATA_DIR: app.store.dataDir! }
  const embedder = { EMBEDDINGS_URL: 'http://127.0.0.1:9/v1', EMBEDDINGS_MODEL: 'next-model' }
  try {
    const lines = await doctorLines({ ...where, ...embedder })
    expect(lines.filter((l) => /^\S+ +search /.test(l))).toEqual([
      'warn  search     0 of 1 project(s) have vectors from openai:next-model; 1 (3 nodes) wait for the background embedding and match by keyword until then',
    ])
    expect(lines).toContain('                 → start the server: it embeds them in the background while search answers')
  } finally {
    // open it once more to drop it (the temporary DATA_DIR, or the PostgreSQL database)
    await (await startApp({}, { reopen: app })).close()
  }
})
