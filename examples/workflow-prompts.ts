/**
 * Writes docs/workflow-prompts.md: the first prompt of each workflow flow for a 40-node
 * project, as an agent receives it (the sizes go to stdout, not into the page: figures live in
 * bench/README.md). Runs Arbor in this process on
 * a throw-away in-memory database and talks to it through its request handler.
 *
 *   bun run workflow:prompts            (writes docs/workflow-prompts.md)
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { bootstrapOwner } from '../src/accounts/service'
import { createApp } from '../src/app'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/create-deps'
import { openDb } from '../src/db'
import type { Deps } from '../src/deps'
import { createLogger } from '../src/log'

const config = loadConfig({
  DATABASE_URL: 'memory://',
  RATE_LIMIT_PER_MINUTE: '0',
  PUBLIC_BASE_URL: 'http://localhost:3000',
  LOG_LEVEL: 'silent',
})
const db = await openDb(config)
const deps: Deps = createDeps({ config, db, log: createLogger('silent') })
const key = (await bootstrapOwner(db))!
const { handle } = createApp(deps)

async function call(path: string, body: unknown) {
  const res = await handle(
    new Request(`http://localhost:3000${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )
  const json = (await res.json()) as Record<string, any>
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

const projectId = 'field-notes'
await call('/api/v1/mutate', { action: 'addProject', project: { name: 'Field Notes', id: projectId } })
await call('/api/v1/mutate', { action: 'addIteration', projectId, iteration: { name: 'Reliable sync' } })

// 40 nodes: 2 goals, 4 needs, 8 approaches, 20 jobs, 6 tasks
const add = (id: string, type: string, parentId: string | null, data: Record<string, unknown>) => ({
  action: 'add',
  node: { id: `draft-${id}`, type, ...(parentId ? { parentId: `draft-${parentId}` } : {}), data },
})
const mutations = [
  add('g1', 'goal', null, { label: 'Researchers trust their field notes', goalStatus: 'focus' }),
  add('g2', 'goal', null, { label: 'Teams share findings without friction', goalStatus: 'later' }),
  add('n1', 'need', 'g1', { label: 'Notes get lost when the phone is offline' }),
  add('n2', 'need', 'g1', { label: 'Photos and notes drift apart' }),
  add('n3', 'need', 'g2', { label: 'Sharing a notebook takes too many steps' }),
  add('n4', 'need', 'g2', { label: 'Reviewers cannot comment in place' }),
  add('a1', 'approach', 'n1', { label: 'Offline-first local store', approachStatus: 'development', size: 'car', kano: 'must-have' }),
  add('a2', 'approach', 'n1', { label: 'Conflict-free merge on reconnect', approachStatus: 'validation', size: 'truck' }),
  add('a3', 'approach', 'n2', { label: 'Attach photos to the note they belong to', size: 'vespa', kano: 'incremental' }),
  add('a4', 'approach', 'n2', { label: 'Automatic location and time tags', size: 'skateboard', kano: 'delighter' }),
  add('a5', 'approach', 'n3', { label: 'Share links with roles', size: 'car' }),
  add('a6', 'approach', 'n3', { label: 'Team spaces', size: 'truck' }),
  add('a7', 'approach', 'n4', { label: 'Inline comments', size: 'vespa' }),
  add('a8', 'approach', 'n4', { label: 'Review mode with suggestions', size: 'car', approachStatus: 'retired' }),
  ...[
    ['a1', 'A note written in airplane mode is there after a restart', 'done', 'Reliable sync'],
    ['a1', 'The app opens in under a second with 10,000 notes'],
    ['a1', 'Storage use is shown in settings', 'done', 'Reliable sync'],
    ['a2', 'Two offline edits of one note merge without loss', undefined, 'Reliable sync'],
    ['a2', 'A conflict the merge cannot settle is shown side by side'],
    ['a2', 'Sync resumes by itself when the network returns'],
    ['a3', 'A photo taken from a note is attached to it'],
    ['a3', 'Photos of a note show as a strip under its text'],
    ['a4', 'Each note carries the place it was written'],
    ['a4', 'Notes can be filtered by day'],
    ['a5', 'An owner shares a notebook read-only by link'],
    ['a5', 'An editor link can be revoked at once'],
    ['a6', 'A team space lists every member notebook'],
    ['a6', 'Members join a space from an invitation e-mail'],
    ['a7', 'A reviewer comments on one paragraph'],
    ['a7', 'The author gets a notification for each comment'],
    ['a7', 'Resolved comments fold away'],
    ['a8', 'Suggestions can be accepted one by one'],
    ['a5', 'Shared notebooks show who last edited them'],
    ['a3', 'Photos are compressed before upload', 'done'],
  ].map(([parent, label, status, iteration], i) =>
    add(`j${i}`, 'job', parent!, {
      label,
      ...(status ? { status } : {}),
      ...(iteration ? { iteration } : {}),
      maturity: i % 3 ? 'mvp' : 'releasable',
    }),
  ),
  ...[
    ['Ask Dana about the export format', 'She mentioned CSV and GPX.'],
    ['Export notes as CSV', 'Requested twice at the June workshop.'],
    ['CSV export', ''],
    ['Renew the Apple developer certificate', 'Expires in August.'],
    ['Idea: dark mode', ''],
    ['Old: evaluate the 2019 sync library', 'We chose another approach since.'],
  ].map(([label, description], i) => add(`t${i}`, 'task', null, { label, ...(description ? { description } : {}) })),
]
await call('/api/v1/mutate', { action: 'batch', projectId, mutations })

const flows: [string, Record<string, unknown>][] = [
  ['add', { input: 'Let researchers export a notebook as CSV for their spreadsheets' }],
  ['task-curate', {}],
  ['phase-assign', {}],
]
const sections: string[] = []
const sizes: string[] = []
for (const [flow, extra] of flows) {
  const res = await call('/api/v1/workflow', { projectId, action: 'start', flow, ...extra })
  const prompt = String(res.prompt)
  sizes.push(`| \`${flow}\` (step \`${res._meta.step}\`) | ${prompt.length.toLocaleString('en')} |`)
  sections.push(`## \`${flow}\`\n\n\`\`\`\`text\n${prompt}\n\`\`\`\``)
}
const doc = `# Workflow prompts for a 40-node project

The first prompt of each flow, exactly as \`POST /api/v1/workflow\` with \`action:"start"\` returns
it, for a project of 40 nodes (2 goals, 4 needs, 8 approaches, 20 jobs, 6 tasks). Written by
\`bun run workflow:prompts\` (examples/workflow-prompts.ts); the templates are in
\`src/workflow/prompts/\`.

${sections.join('\n\n')}
`
const out = join(import.meta.dir, '..', 'docs', 'workflow-prompts.md')
mkdirSync(join(import.meta.dir, '..', 'docs'), { recursive: true })
writeFileSync(out, doc)
console.log(sizes.join('\n'))
await db.close()
