import { afterAll, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pruneHistory } from '../src/history/service'
import { loops } from '../src/scheduler'
import { startApp } from './helpers'

// history.md, 2: every committed write of a node or an iteration records its changes in the same
// transaction. The guard lists each SQL statement that writes `nodes` or `iterations` with the
// function whose callers record the change; the TypeScript that runs the statement must name
// that recorder in the same file. A new writer fails here until it records its changes.
const ROOT = join(import.meta.dir, '..')
const SQL = join(ROOT, 'sql')

/** statement → the functions of its module's queries.ts that run it, and the files that call them and record the change */
const WRITERS: Record<string, { runs: string[]; recordedIn: string[] } | { exempt: string }> = {
  // nodes: every write of a WriteCtx notes its change (noteChange) and saving (src/events/outbox.ts `save`) records them in one statement
  'nodes/insert-many.sql': { runs: ['insertMany'], recordedIn: ['src/nodes/write.ts'] },
  'nodes/update.sql': { runs: ['update'], recordedIn: ['src/nodes/write.ts'] },
  'nodes/delete-many.sql': { runs: ['deleteMany', 'deleteLogged'], recordedIn: ['src/nodes/write.ts'] },
  'nodes/set-classified.sql': { runs: ['setClassified'], recordedIn: ['src/nodes/service.ts'] },
  'nodes/set-classified-many.sql': { runs: ['setClassifiedMany'], recordedIn: ['src/nodes/classify-loop.ts'] },
  'nodes/move-iteration.sql': { runs: ['moveIteration'], recordedIn: ['src/nodes/service.ts'] },
  // iterations: each action notes its own change beside its write, in the outbox its write saves
  'iterations/insert.sql': { runs: ['insert'], recordedIn: ['src/iterations/service.ts'] },
  'iterations/update.sql': { runs: ['update'], recordedIn: ['src/iterations/service.ts'] },
  'iterations/delete.sql': { runs: ['remove'], recordedIn: ['src/iterations/service.ts'] },
  'iterations/set-order.sql': { runs: ['setOrder'], recordedIn: ['src/iterations/service.ts'] },
  // a project is born with its system iteration Later: part of creating the project, not a change of a plan
  'projects/insert-system-iteration.sql': { exempt: 'the system iteration Later, created with its project' },
  // an import that never finished is removed whole, its changes with it: nobody ever saw its project (src/projects/importing.ts)
  'projects/delete-import-part.sql': { exempt: 'the nodes of an import that never finished, removed with their changes' },
}

/** a change noted in a WriteCtx (noteChange) or an outbox (src/events/outbox.ts: saved by the write's `save`), or recorded at once */
const RECORDERS = /\b(noteChange|recordChanges)\(|\.changes\.push\((nodeChange|iterationChange)\(/

it('knows every statement that writes nodes or iterations, and each is recorded where it runs', () => {
  const writers: string[] = []
  for (const dir of readdirSync(SQL))
    if (dir !== 'migrations')
      for (const file of readdirSync(join(SQL, dir))) {
        const text = readFileSync(join(SQL, dir, file), 'utf8').replace(/--.*$/gm, '')
        if (/\b(insert\s+into|update|delete\s+from)\s+(nodes|iterations)\b/i.test(text)) writers.push(`${dir}/${file}`)
      }
  expect(writers.sort()).toEqual(Object.keys(WRITERS).sort())
  const unrecorded: string[] = []
  for (const [file, how] of Object.entries(WRITERS)) {
    if ('exempt' in how) continue
    const mod = file.split('/')[0]!
    const queries = readFileSync(join(ROOT, 'src', mod, 'queries.ts'), 'utf8')
    // the name queries.ts imports the statement under, and each listed function runs it
    const imported = new RegExp(`import (\\w+) from '../../sql/${file.replace('.', '\\.')}'`).exec(queries)?.[1]
    for (const runner of how.runs) {
      const body = new RegExp(`export (?:const|async function) ${runner}\\b[\\s\\S]*?(?=\\nexport |$)`).exec(queries)?.[0] ?? ''
      if (!imported || !body.includes(imported)) unrecorded.push(`${file}: ${runner} of src/${mod}/queries.ts does not run it`)
    }
    for (const src of how.recordedIn)
      if (!RECORDERS.test(readFileSync(join(ROOT, src), 'utf8'))) unrecorded.push(`${file}: ${src} records no change`)
    // every call of a runner, as q.<runner> inside its module: no other module reaches its
    // queries.ts (test/architecture.test.ts), and no service hands its queries out
    for (const path of srcFiles(join(ROOT, 'src', mod))) {
      const rel = path.slice(ROOT.length + 1)
      const text = readFileSync(path, 'utf8')
      for (const runner of how.runs)
        if (new RegExp(`\\bq\\.${runner}\\(`).test(text) && !how.recordedIn.includes(rel))
          unrecorded.push(`${file}: ${rel} runs ${runner} and is not known to record its change`)
    }
  }
  expect(unrecorded).toEqual([])
})

function srcFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? srcFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

const app = await startApp({ HISTORY_DAYS: '30' })
afterAll(() => app.close())

it('prunes changes older than HISTORY_DAYS, and keeps them for ever with 0', async () => {
  const p = await app.project()
  await app.call('POST', '/api/v1/mutate', { body: { action: 'add', projectId: p, node: { type: 'goal', data: { label: 'G' } } } })
  const count = async () => (await app.call('GET', `/api/v1/history?projectId=${p}`)).body.changes.length
  expect(await count()).toBe(1)
  const DAY = 86_400_000
  expect(await pruneHistory(app.deps, new Date(Date.now() + 29 * DAY))).toBe(0)
  expect(await pruneHistory({ ...app.deps, config: { ...app.config, historyDays: 0 } }, new Date(Date.now() + 9999 * DAY))).toBe(0)
  expect(await count()).toBe(1)
  // the hourly clean-up loop does it
  const cleanup = loops.find((l) => l.name === 'idempotency-cleanup')!
  expect(await cleanup.tick(app.deps, new Date(Date.now() + 31 * DAY))).toMatchObject({ changes: 1 })
  expect(await count()).toBe(0)
})
