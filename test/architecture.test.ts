import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { insertWithChangesSql } from '../bench/lib/one-statement-saving'

/**
 * The module rules of ARCHITECTURE.md, checked on every import in src/. A failure lists each
 * forbidden edge as `file → import (rule)`.
 */
const SRC = join(import.meta.dir, '..', 'src')

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : /\.(ts|js)$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The module a path under src/ belongs to: its first folder, or '' for the top-level files. */
const moduleOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0]! : '')

/**
 * Where a module may read another module's SQL, and why. Changelog statements belong to the
 * nodes module (it writes and restores them); migrations are run by src/db.
 */
const SQL_OWNERS: Record<string, string[]> = { nodes: ['nodes', 'changelog'], http: ['idempotency'], db: ['migrations'] }

function violations(): string[] {
  const out: string[] = []
  for (const path of files(SRC)) {
    const rel = relative(SRC, path)
    const mod = moduleOf(rel)
    const name = rel.split('/').at(-1)!
    const text = readFileSync(path, 'utf8')
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!
      const edge = (rule: string) => out.push(`${rel} → ${spec} (${rule})`)
      if (spec === 'elysia' || spec.startsWith('@elysiajs/')) {
        // only the HTTP edge knows the framework: route files, the app and the shared http layer
        if (!(name === 'routes.ts' || rel === 'app.ts' || mod === 'http' || mod === 'mcp'))
          edge('only routes.ts, app.ts and src/http use Elysia')
        continue
      }
      if (!spec.startsWith('.')) continue
      const target = normalize(join(dirname(rel), spec))
      if (target.startsWith('../sql/')) {
        const sqlModule = target.split('/')[2]!
        if (name !== 'queries.ts' && !(mod === 'db' && sqlModule === 'migrations') && rel !== '../sql/migrations/index.ts')
          edge('only a queries.ts imports SQL')
        if (!(SQL_OWNERS[mod] ?? [mod]).includes(sqlModule)) edge(`SQL of ${sqlModule} belongs to its own module`)
        continue
      }
      const tmod = moduleOf(target)
      if (mod === 'mcp' && tmod !== 'mcp' && /(^|\/)(service|queries)$/.test(target))
        edge('the MCP server is an HTTP client: no service or query imports')
      if (tmod && tmod !== mod && /(^|\/)queries$/.test(target)) edge("another module's rows come through its service.ts")
    }
    // a re-export hands queries.ts out under another name (`export * as nodeRows from './queries'`); a row type may pass
    for (const m of text.matchAll(/^export\s+(\*|\{[^}]*\})(?:\s+as\s+\w+)?\s+from\s+['"]([^'"]+)['"]/gm))
      if (/(^|\/)queries$/.test(m[2]!))
        out.push(`${rel} → ${m[2]} (a module offers its rows by name in its service.ts, never by re-exporting queries.ts)`)
    // nor by handing its query functions out as values (`export const nodeRows = { list: q.list }`):
    // what another module may read or write is a function of the service, named for what it does
    for (const m of text.matchAll(/^export\s+const\s+(\w+)\s*=\s*(\{[^}]*\bq\.\w+\s*[,}][^}]*\}?|q\.\w+\s*$)/gm))
      out.push(`${rel}: ${m[1]} (hands out query functions; offer a named function of the service that calls them)`)
  }
  return out
}

const SQL = join(import.meta.dir, '..', 'sql')

/**
 * The tables each module owns: only its own SQL (sql/<module>/, or a folder it owns by
 * SQL_OWNERS) inserts into, updates or deletes from them. A table written by SQL of sql/ must be
 * named here. Reads of another module's table are not checked here (ARCHITECTURE.md lists them).
 */
const TABLE_OWNERS: Record<string, string[]> = {
  accounts: ['users', 'api_keys'],
  claims: ['claims'],
  events: ['events'],
  feedback: ['feedback'],
  history: ['changes'],
  http: ['idempotency_keys'],
  iterations: ['iterations'],
  nodes: ['nodes', 'node_counters', 'changelog'],
  presence: ['presence'],
  projects: ['projects', 'project_members'],
  proposals: ['proposals'],
  revisions: ['project_revisions'],
  search: ['search_vectors', 'search_backfill', 'search_cursors', 'leases'],
  share: ['share_tokens'],
  view: ['view_commands', 'view_states'],
  webhooks: ['webhooks', 'webhook_cursors', 'webhook_deliveries'],
  workflow: ['workflow_spent_states', 'server_secrets'],
}

/**
 * A module's SQL writing another's table, each with its reason (ARCHITECTURE.md, "Who may call
 * whom"): `file → table`. Every entry must still be found (a stale one would hide a new write).
 */
const FOREIGN_WRITES_ALLOWED: Record<string, string> = {
  // an import that never finished is taken away part by part, each part one short transaction
  'projects/delete-import-part.sql → changes': 'an unfinished import removed',
  'projects/delete-import-part.sql → events': 'an unfinished import removed',
  'projects/delete-import-part.sql → nodes': 'an unfinished import removed',
  // a project is made with its system iteration Later in its transaction
  'projects/insert-system-iteration.sql → iterations': 'a project starts with Later',
}

/** The tables a statement inserts into, updates, deletes from, merges into or truncates (comments left out; `on conflict … do update` and `for update` are not writes of another table). */
function tablesWritten(text: string): string[] {
  const sql = text
    .replace(/--.*$/gm, '')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .toLowerCase()
  const found = new Set<string>()
  const pattern = /\b(insert\s+into|delete\s+from|merge\s+into|truncate(?:\s+table)?|update)\s+(?:only\s+)?("?[a-z_][a-z0-9_.]*"?)/g
  for (const m of sql.matchAll(pattern)) {
    const before = sql.slice(Math.max(0, m.index - 12), m.index)
    // `do update set` (an upsert of the same table), `for [no key] update` (a lock)
    if (m[1] === 'update' && /\b(do|for|key)\s+$/.test(before)) continue
    found.add(m[2]!.replace(/"/g, '').replace(/^public\./, ''))
  }
  return [...found]
}

/** Each write of a table by SQL of a module that does not own it, as `folder/file → table`; a table no module owns, likewise. */
function foreignWrites(files: { path: string; text: string }[]): string[] {
  const ownerOfTable = new Map(Object.entries(TABLE_OWNERS).flatMap(([mod, tables]) => tables.map((t) => [t, mod] as const)))
  const moduleOfFolder = (folder: string) => Object.entries(SQL_OWNERS).find(([, folders]) => folders.includes(folder))?.[0] ?? folder
  const out: string[] = []
  for (const { path, text } of files) {
    const mod = moduleOfFolder(path.split('/')[0]!)
    for (const table of tablesWritten(text)) {
      const owner = ownerOfTable.get(table)
      if (owner === undefined) out.push(`${path} → ${table} (a table no module owns: name it in TABLE_OWNERS)`)
      else if (owner !== mod) out.push(`${path} → ${table}`)
    }
  }
  return out
}

/** Every SQL file of sql/ but the migrations (which create every table), as `folder/file`. */
const sqlFiles = () =>
  readdirSync(SQL)
    .filter((dir) => dir !== 'migrations' && statSync(join(SQL, dir)).isDirectory())
    .flatMap((dir) =>
      readdirSync(join(SQL, dir))
        .filter((f) => f.endsWith('.sql'))
        .map((f) => ({ path: `${dir}/${f}`, text: readFileSync(join(SQL, dir, f), 'utf8') })),
    )

/** Each file of src/ (relative path) with the files of src/ it imports, type-only imports included. */
function importGraph(): Map<string, string[]> {
  const all = new Set(files(SRC).map((p) => relative(SRC, p)))
  const graph = new Map<string, string[]>()
  for (const rel of all) {
    const text = readFileSync(join(SRC, rel), 'utf8')
    const targets = [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)].flatMap((m) => {
      const base = normalize(join(dirname(rel), m[1]!))
      const found = [base, `${base}.ts`, `${base}.js`, `${base}/index.ts`].find((c) => all.has(c))
      return found ? [found] : []
    })
    graph.set(rel, [...new Set(targets)])
  }
  return graph
}

/** The room of a file: its folder under src/ (its module), or the file itself at the top. */
const roomOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0]! : rel)

/** The import graph between rooms (folders, and the top-level files), from the file graph. */
function roomGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const rooms = new Map<string, Set<string>>()
  for (const [file, targets] of graph) {
    const from = roomOf(file)
    if (!rooms.has(from)) rooms.set(from, new Set())
    for (const t of targets) if (roomOf(t) !== from) rooms.get(from)!.add(roomOf(t))
  }
  return new Map([...rooms].map(([room, targets]) => [room, [...targets]]))
}

/**
 * Module-level state that outlives a request and belongs to no app: a top-level `let`, or a
 * top-level Map/Set/WeakMap/WeakSet that the file changes. State belongs in an object built in
 * createDeps (or by the app) and passed in `deps`. Browser code (src/web/client) is a page's own.
 */
function singletons(): string[] {
  const out: string[] = []
  for (const path of files(SRC)) {
    const rel = relative(SRC, path)
    if (rel.startsWith('web/client/')) continue
    const text = readFileSync(path, 'utf8')
    const names = [
      ...[...text.matchAll(/^(?:export )?let (\w+)/gm)].map((m) => m[1]!),
      ...[...text.matchAll(/^(?:export )?const (\w+)(?::[^=]+)? = new (?:Map|Set|WeakMap|WeakSet)\b/gm)]
        .map((m) => m[1]!)
        .filter((name) => new RegExp(`\\b${name}\\.(set|add|delete|clear)\\(`).test(text)),
    ]
    for (const name of names) if (!Object.hasOwn(SINGLETONS_ALLOWED, `${rel}:${name}`)) out.push(`${rel}:${name}`)
  }
  return out
}

/**
 * The module-level state that stays, each with its reason: what is loaded once per process and
 * never changes after (a model, a bundle, a compiled validator), and the per-process facts that
 * no app owns (the clock's last reading, the exit hooks).
 */
const SINGLETONS_ALLOWED: Record<string, string> = {
  'http/action-schema.ts:compiled': 'the compiled validator of each schema constant: a pure function of it',
  'tree/service.ts:tokenizer': 'the tokenizer, loaded once and read-only',
  'web/bundle.ts:bundled': "the app's page bundle, built once and read-only",
  'web/plan-bundle.ts:bundled': "the MCP plan view's script embedded in the single executable, set once and read-only",
  'web/plan-bundle.ts:built': 'the MCP plan view document, built once per process from a read-only template and script',
  'search/embedder/glove.ts:idle': "the idle timer of the process's one copy of the word vectors",
  'search/embedder/minilm-worker.ts:model': "the worker thread's model, loaded once",
  'search/embedder/use.ts:model': 'the model, loaded once per process (hundreds of MB: never one per app)',
  'search/embedder/use.ts:worker': "the model's worker thread, one per process like the model",
  'search/embedder/minilm.ts:bundled': 'where the bundled model was found, looked up once',
  'search/embedder/wordvectors.ts:loaded': 'the word vectors, loaded once per process and read-only',
  'search/embedder/wordvectors.ts:bundled': 'where the bundled vectors were found, looked up once',
  'search/embedder/wordvectors.ts:parsedEnd': 'how far the one shared copy of the vectors is parsed',
  'db/pglite-assets.ts:assets': "PGlite's WebAssembly modules, compiled once per process and read-only",
  'db/pglite.ts:lastTurn': "when the process's event loop last got a turn during a long write",
  'log.ts:lastMs': 'the last timestamp written, so that one millisecond is formatted once',
  'log.ts:lastIso': 'the last timestamp written, so that one millisecond is formatted once',
  'log.ts:atExit': "the process's exit hooks",
  'mcp/http.ts:sdk': 'a lazy import() of the MCP SDK: the runtime keeps a module once per process anyway',
  'mcp/stdio.ts:config': "the stdio server's own process: its config, read once at start",
  // not moved into deps (issue 23 asked for it): one keeper per app, keyed by its deps in a WeakMap;
  // what it watches, the RSS, is the process's, so moving it would change nothing a test can see
  'maintenance/memory.ts:keepers': "the memory keeper of each app's scheduler, keyed by its deps",
}

/** The import circles of a graph: its strongly connected parts of two files or more (Tarjan), each sorted. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const part: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      part.push(w)
    } while (w !== v)
    if (part.length > 1) out.push(part.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return out
}

/**
 * The floors of ARCHITECTURE.md's table: each room (folder, or top-level file) named in a row's
 * Files column, with the row's floor number.
 */
function floors(): Map<string, number> {
  const text = readFileSync(join(SRC, '..', 'ARCHITECTURE.md'), 'utf8')
  const out = new Map<string, number>()
  for (const m of text.matchAll(/^\| (\d+) [^|]*\| ([^|]+) \|/gm))
    for (const name of m[2]!.matchAll(/`([^`]+)`/g)) out.set(name[1]!.replace(/\/$/, ''), Number(m[1]))
  return out
}

/** Every arrow between rooms that runs up a floor, and every room the table does not name. */
function arrowsUp(rooms: Map<string, string[]>, floor: Map<string, number>): string[] {
  const out: string[] = []
  for (const [from, targets] of rooms) {
    const own = floor.get(from)
    if (own === undefined) {
      out.push(`${from}: on no floor of ARCHITECTURE.md`)
      continue
    }
    for (const to of targets) {
      const theirs = floor.get(to)
      if (theirs !== undefined && theirs > own) out.push(`${from} (floor ${own}) → ${to} (floor ${theirs})`)
    }
  }
  return out
}

describe('module boundaries (ARCHITECTURE.md)', () => {
  it('each folder and top-level file of src/ stands on a floor of ARCHITECTURE.md and imports none above it', () => {
    const floor = floors()
    expect(floor.size).toBeGreaterThan(30)
    expect(arrowsUp(roomGraph(importGraph()), floor)).toEqual([])
    // the check sees an arrow up, and a room on no floor
    expect(
      arrowsUp(
        new Map([
          ['db', ['app.ts']],
          ['elsewhere', []],
        ]),
        floor,
      ),
    ).toEqual(['db (floor 1) → app.ts (floor 6)', 'elsewhere: on no floor of ARCHITECTURE.md'])
  })

  it('no file in src/ imports across a forbidden edge', () => {
    expect(violations()).toEqual([])
  })

  it('no two files of src/ import each other, directly or round a circle (a type both need goes in a leaf file)', () => {
    expect(circles(importGraph())).toEqual([])
  })

  it('no two folders of src/ import each other, directly or round a circle (the floors of ARCHITECTURE.md)', () => {
    expect(circles(roomGraph(importGraph()))).toEqual([])
  })

  it('no module keeps mutable state of its own at module level (it goes in deps)', () => {
    expect(singletons()).toEqual([])
  })

  it('would catch a circle between folders and a module-level singleton (the checks see what they should)', () => {
    const graph = new Map([
      ['nodes/service.ts', ['search/service.ts']],
      ['search/service.ts', ['nodes/model.ts']],
      ['nodes/model.ts', []],
      ['deps.ts', []],
    ])
    expect(circles(roomGraph(graph))).toEqual([['nodes', 'search']])
    expect(roomGraph(importGraph()).get('app.ts')).toContain('mutate') // the scan resolves folders
    // every allowed singleton still exists: a stale entry would hide a new one of the same name
    const seen = files(SRC).flatMap((p) => {
      const rel = relative(SRC, p)
      const text = readFileSync(p, 'utf8')
      return Object.keys(SINGLETONS_ALLOWED).filter(
        (k) => k.startsWith(`${rel}:`) && new RegExp(`^(?:export )?(?:let|const) ${k.split(':')[1]}\\b`, 'm').test(text),
      )
    })
    expect(seen.sort()).toEqual(Object.keys(SINGLETONS_ALLOWED).sort())
  })

  it('would catch a circle (the check finds the loops it should, and only those)', () => {
    const graph = new Map([
      ['scheduler.ts', ['share/loop.ts', 'deps.ts']],
      ['share/loop.ts', ['scheduler.ts']],
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'deps.ts']],
      ['deps.ts', []],
    ])
    expect(circles(graph)).toEqual([
      ['scheduler.ts', 'share/loop.ts'],
      ['a.ts', 'b.ts', 'c.ts'],
    ])
    expect(importGraph().get('scheduler.ts')).toContain('loop.ts') // the scan resolves this repository's imports
  })

  it('would catch a forbidden edge (the scan reads the imports it should)', () => {
    const seen = files(SRC).some((p) => /from '\.\.\/nodes\/service'/.test(readFileSync(p, 'utf8')))
    expect(seen).toBe(true) // the scan's regex matches this repository's import style
  })

  it("no module's SQL writes another module's table (the saving step: history's statement writes changes, the events' events)", () => {
    const found = foreignWrites(sqlFiles())
    expect(found.filter((w) => !(w in FOREIGN_WRITES_ALLOWED))).toEqual([])
    // every allowed write is still there: a stale entry would hide a new one
    expect(Object.keys(FOREIGN_WRITES_ALLOWED).filter((w) => !found.includes(w))).toEqual([])
  })

  it("would catch a module's SQL writing another's table (the scan reads the statements it should)", () => {
    // the saving step's one statement before the fourteenth pass: the events' SQL inserting history's changes
    expect(foreignWrites([{ path: 'events/insert-with-changes.sql', text: insertWithChangesSql }])).toEqual([
      'events/insert-with-changes.sql → changes',
    ])
    expect(
      foreignWrites([
        { path: 'history/x.sql', text: 'update nodes set data = $2 where id = $1' },
        { path: 'nodes/y.sql', text: 'with d as (delete from "events" where seq = $1 returning 1) select 1' },
        { path: 'changelog/z.sql', text: 'insert into changelog (id) values ($1) on conflict (id) do update set id = excluded.id' },
        { path: 'claims/w.sql', text: '-- update changes\nselect * from claims for update skip locked' },
        { path: 'search/v.sql', text: 'insert into somewhere_new values (1)' },
      ]),
    ).toEqual([
      'history/x.sql → nodes',
      'nodes/y.sql → events',
      'search/v.sql → somewhere_new (a table no module owns: name it in TABLE_OWNERS)',
    ])
  })
})
