import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

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
  }
  return out
}

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

describe('module boundaries (ARCHITECTURE.md)', () => {
  it('no file in src/ imports across a forbidden edge', () => {
    expect(violations()).toEqual([])
  })

  it('no two files of src/ import each other, directly or round a circle (a type both need goes in a leaf file)', () => {
    expect(circles(importGraph())).toEqual([])
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
})
