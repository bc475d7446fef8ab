import { describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

// The work state's update trigger (migration 0044, work_nodes_update) is a row trigger that does a
// statement's work once: the first of the statement's rows to fire reads both transition tables
// whole, and leaves in `arbor.work_update_rows` (transaction-local) how many of its rows fire after
// it; each of those counts one down and returns. 0044 relies on no statement updating nodes in two
// of its parts (two writable CTEs, a CTE and the main statement, an `insert … on conflict do
// update` beside an update), and on no function updating nodes. The second is certain: a
// function's update is a statement of its own run inside another one, and inside the trigger's
// body (which sets the count before it calls work_changed) its rows would count the outer
// statement's count down and skip their own work. The first held when tried (two CTEs marking
// three jobs done, PGlite and PostgreSQL 15: the count ended at 0, the work items right), but
// nothing documents that it must. This reads every statement under sql/
// (migrations included: their statements, and each function's and `do` block's body) and fails
// naming each one that breaks either rule. A statement kept in TypeScript would escape it, so src/
// holds no update of nodes either (they live under sql/, read by src/*/queries.ts).
// test/work.update-trigger.test.ts checks at run time that each statement leaves no count behind.

const ROOT = join(import.meta.dir, '..')

/** The text with comments removed and string literals emptied; each dollar-quoted body cut out (as `$$`) and given apart. */
function lex(text: string): { code: string; bodies: string[] } {
  let code = ''
  const bodies: string[] = []
  let i = 0
  while (i < text.length) {
    const rest = text.slice(i)
    if (rest.startsWith('--')) {
      const end = text.indexOf('\n', i)
      i = end < 0 ? text.length : end
      code += ' '
    } else if (rest.startsWith('/*')) {
      // block comments nest in PostgreSQL
      let depth = 0
      do {
        const step = text.startsWith('/*', i) ? 1 : text.startsWith('*/', i) ? -1 : 0
        depth += step
        i += step ? 2 : 1
      } while (depth > 0 && i < text.length)
      code += ' '
    } else if (text[i] === "'") {
      // '' inside a literal is a quote; E'…' strings also escape one with a backslash
      const escapes = /[eE]$/.test(code) && !/\w[eE]$/.test(code)
      i++
      while (i < text.length) {
        if (escapes && text[i] === '\\') i += 2
        else if (text[i] === "'" && text[i + 1] === "'") i += 2
        else if (text[i] === "'") break
        else i++
      }
      i++
      code += "''"
    } else if (/^\$[A-Za-z_]\w*\$|^\$\$/.test(rest) && !/[\w$]$/.test(code)) {
      const tag = /^\$(?:[A-Za-z_]\w*)?\$/.exec(rest)![0]
      const end = text.indexOf(tag, i + tag.length)
      if (end < 0) throw new Error(`an unterminated ${tag} body`)
      bodies.push(text.slice(i + tag.length, end))
      i = end + tag.length
      code += '$$'
    } else {
      code += text[i]
      i++
    }
  }
  return { code, bodies }
}

const NODES = String.raw`(?:only\s+)?(?:(?:public|"public")\.)?(?:nodes|"nodes")(?![\w$"])`

/** From `start`, the text up to the end of the part it begins: the close of its enclosing parenthesis, or the statement's end. */
function extent(code: string, start: number): string {
  let depth = 0
  for (let i = start; i < code.length; i++) {
    if (code[i] === '(') depth++
    else if (code[i] === ')' && --depth < 0) return code.slice(start, i)
  }
  return code.slice(start)
}

/** How many parts of one statement (lexed, no `;` in it) update nodes: `update nodes`, `insert into nodes … on conflict … do update`, `merge into nodes … then update`. */
export function nodeUpdateParts(statement: string): number {
  let parts = 0
  // not a row lock (`for update`, `for no key update`), which is no update
  for (const _ of statement.matchAll(new RegExp(String.raw`(?<!\bfor\s+(?:no\s+key\s+)?)\bupdate\s+${NODES}`, 'gi'))) parts++
  for (const m of statement.matchAll(new RegExp(String.raw`\binsert\s+into\s+${NODES}`, 'gi')))
    if (/\bon\s+conflict\b[\s\S]*\bdo\s+update\b/i.test(extent(statement, m.index!))) parts++
  for (const m of statement.matchAll(new RegExp(String.raw`\bmerge\s+into\s+${NODES}`, 'gi')))
    if (/\bthen\s+update\b/i.test(extent(statement, m.index!))) parts++
  return parts
}

type Finding = { where: string; parts: number; text: string }

/**
 * Each statement of a file (split on `;` outside strings, comments and bodies) with how many of
 * its parts update nodes; a `create function`'s body counts as one place, with any body inside it
 * (any update of nodes in it breaks the rule); any other body (a `do` block, a procedure, a text
 * run by `execute`) is statements of its own.
 */
function statements(text: string, where: string): { found: Finding[]; functions: Finding[] } {
  const { code, bodies } = lex(text)
  const found: Finding[] = []
  const functions: Finding[] = []
  let body = 0
  for (const st of code.split(';')) {
    const own = (st.match(/\$\$/g) ?? []).map(() => bodies[body++]!)
    found.push({ where, parts: nodeUpdateParts(st), text: st.trim().replace(/\s+/g, ' ').slice(0, 120) })
    for (const b of own) {
      if (!/^\s*create\s+(?:or\s+replace\s+)?function\b/i.test(st)) {
        // a do block, or a statement's text in a body (`execute $q$…$q$`): statements of its own
        const inner = statements(b, `${where} (a body)`)
        found.push(...inner.found)
        functions.push(...inner.functions)
      } else {
        // its statements, and those of any body inside it (`execute $q$…$q$`)
        const everywhere = (t: string): number => {
          const { code: inner, bodies: nested } = lex(t)
          return nodeUpdateParts(inner) + nested.reduce((n, x) => n + everywhere(x), 0)
        }
        const parts = everywhere(b)
        functions.push({ where: `${where} (a function's body)`, parts, text: st.trim().replace(/\s+/g, ' ').slice(0, 120) })
      }
    }
  }
  return { found, functions }
}

function sqlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sqlFiles(path) : name.endsWith('.sql') ? [path] : []
  })
}

describe('no statement updates nodes in two parts (migration 0044: work_nodes_update counts its rows)', () => {
  it('the check sees each form of a part that updates nodes, and no lock or other table', () => {
    const parts = (text: string) => statements(text, 'example')
    const count = (text: string) => parts(text).found.reduce((n, f) => n + f.parts, 0)
    expect(count('update nodes set data = $2 where id = $1')).toBe(1)
    expect(
      count(`with a as (update nodes set data = '{}' where id = 'x;y' returning id) update nodes n set rev = 1 from a where n.id = a.id`),
    ).toBe(2)
    expect(
      count('with a as (update only public.nodes set rev = 1 returning id), b as (update "nodes" set rev = 2 returning id) select 1'),
    ).toBe(2)
    expect(count('insert into nodes (id) values ($1) on conflict (project_id, id) do update set data = excluded.data')).toBe(1)
    expect(
      count(
        'with a as (insert into nodes (id) values (1) on conflict do nothing returning id) insert into changes (id) select id from a on conflict do update set x = 1',
      ),
    ).toBe(0)
    expect(count('merge into nodes n using x on n.id = x.id when matched then update set data = x.data')).toBe(1)
    expect(count('select * from nodes where id = $1 for update; select 1 from nodes n for no key update of n')).toBe(0)
    expect(count('update nodes_order set x = 1; update work_items set x = 1 -- update nodes\n/* update nodes */')).toBe(0)
    expect(count("select 'update nodes set x = 1'")).toBe(0)
    // a function's body is one place; a do block's statements are each their own
    const fn = parts('create function f() returns trigger language plpgsql as $f$ begin update nodes set rev = 1; return null; end $f$')
    expect(fn.functions.map((f) => f.parts)).toEqual([1])
    const block = parts('do $$ begin update nodes set rev = 1; update nodes set rev = 2; end $$')
    expect(block.found.map((f) => f.parts).filter((n) => n > 0)).toEqual([1, 1])
  })

  it('under sql/: each statement updates nodes in one part at most, and no function updates nodes', () => {
    const found: Finding[] = []
    const functions: Finding[] = []
    for (const path of sqlFiles(join(ROOT, 'sql'))) {
      const got = statements(readFileSync(path, 'utf8'), relative(ROOT, path))
      found.push(...got.found)
      functions.push(...got.functions)
    }
    // what the check must see to mean anything: the statements that update nodes today
    // (sql/nodes/update.sql, set-classified.sql, set-classified-many.sql, move-iteration.sql), and the work functions
    expect(found.filter((f) => f.parts === 1 && f.where.startsWith('sql/nodes/')).length).toBeGreaterThanOrEqual(4)
    expect(functions.filter((f) => /work_nodes_updated/.test(f.text)).length).toBeGreaterThan(0)
    expect([
      ...found.filter((f) => f.parts > 1).map((f) => `${f.where}: ${f.parts} parts update nodes in: ${f.text}`),
      ...functions.filter((f) => f.parts > 0).map((f) => `${f.where}: updates nodes: ${f.text}`),
    ]).toEqual([])
  })

  it('src/ sends no update of nodes of its own (every one is a file under sql/, read above)', () => {
    const ts = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name)
        return statSync(path).isDirectory() ? ts(path) : /\.ts$/.test(name) ? [path] : []
      })
    const offenders = ts(join(ROOT, 'src')).filter((path) => nodeUpdateParts(readFileSync(path, 'utf8')) > 0)
    expect(offenders.map((p) => relative(ROOT, p))).toEqual([])
  })
})
