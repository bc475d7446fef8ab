import { describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

// issue 55, item 3: every command of a fenced shell block in README.md, docs/ and the examples'
// READMEs runs as written after `npm install`, on a machine with only Node.js and npm. Running them
// all would need a server, Docker, PostgreSQL or the network, so this test holds what can be held
// offline and fast: each block parses (`bash -n`), and each command's program is there: an npm
// script that package.json has, `npx bun`/`npx tsc` from node_modules/.bin, `npx arbor` from
// package.json's `bin`, a script or file of the checkout that exists, or one of the outside tools
// a page names as needed (curl, Docker, openssl). A bare `bun` is refused: it is not on PATH.
const ROOT = join(import.meta.dir, '..')
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'examples'))
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => existsSync(join(ROOT, f))),
]
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> }

/** programs from outside the checkout, each with the page or step that says it is needed */
const OUTSIDE = new Map([
  ['curl', 'the HTTP examples'],
  ['docker', 'operations.md and scaling-out.md: Docker'],
  ['openssl', 'operations.md: a random ADMIN_TOKEN'],
  ['grep', 'a filter after docker logs'],
  ['cat', 'a file the stack wrote'],
  ['export', 'a shell builtin'],
  ['api', 'the shell function README step 1 defines'],
])
/** files a command of an earlier step makes (not in the checkout) */
const MADE = new Map([
  ['./dist/arbor', 'npm run build'],
  ['examples/python/.venv/bin/python', 'bash examples/python/generate.sh'],
])

/** The fenced sh/bash/shell blocks of a page. */
function blocks(markdown: string): string[] {
  // a block inside a list item is indented as the item is
  return [...markdown.matchAll(/^([ \t]*)```(?:sh|bash|shell)\n([\s\S]*?)^[ \t]*```/gm)].map(([, indent, body]) =>
    (body as string).replace(new RegExp(`^${indent}`, 'gm'), ''),
  )
}

/** Words of a command line as the shell splits them (quotes kept out), `#` comments dropped, split at && || ; | into commands. */
function commands(block: string): string[][] {
  const out: string[][] = []
  let words: string[] = []
  let word = ''
  let quote: string | null = null
  let inWord = false
  const text = block.replace(/\\\n/g, ' ')
  const end = () => {
    if (inWord) words.push(word)
    word = ''
    inWord = false
  }
  const next = () => {
    end()
    if (words.length) out.push(words)
    words = []
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quote) {
      if (c === quote) quote = null
      else word += c
    } else if (c === '"' || c === "'") {
      quote = c
      inWord = true
    } else if (c === '#' && !inWord) {
      while (i < text.length && text[i] !== '\n') i++
      next()
    } else if (c === '\n' || c === ';') next()
    else if (c === '&' || c === '|') {
      if (text[i + 1] === c) i++
      next()
    } else if (c === ' ' || c === '\t') end()
    else {
      word += c
      inWord = true
    }
  }
  next()
  return out
}

/** Why a command would not run as written after `npm install`, or null. */
function problem(words: string[]): string | null {
  // leading assignments, and a shell function's `name() {` and closing `}`, are not the program
  const at = words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) && !/^(\w+\(\)|\{|\})$/.test(w))
  if (at === -1) return null // nothing but those
  const [program, ...args] = words.slice(at) as [string, ...string[]]
  const files = (list: string[]) => {
    const missing = list.filter((a) => /^(\.\/)?(src|examples|bench|scripts|test)\/\S+\.\w+$/.test(a) && !existsSync(join(ROOT, a)))
    return missing.length ? `no such file: ${missing.join(', ')}` : null
  }
  if (program === 'bun') return 'a bare `bun` is not on PATH after npm install: write `npx bun …` or an npm script'
  if (program === 'npm') {
    const [sub, ...more] = args
    if (sub === 'install' || sub === 'ci') return null
    if (sub === 'start' || sub === 'test') return pkg.scripts[sub] ? null : `package.json has no ${sub} script`
    if (sub === 'run') {
      const name = more.find((a) => !a.startsWith('-'))
      return name && pkg.scripts[name] ? null : `package.json has no script ${name}`
    }
    return `npm ${sub}: not a command these docs should need`
  }
  if (program === 'npx') {
    const [tool, ...more] = args.filter((a) => !a.startsWith('--') || args.indexOf(a) > 0)
    if (tool === 'arbor') return pkg.bin?.arbor && existsSync(join(ROOT, pkg.bin.arbor)) ? null : 'package.json has no bin arbor'
    if (!tool || !existsSync(join(ROOT, 'node_modules/.bin', tool))) return `npx ${tool}: not in node_modules/.bin`
    return files(more)
  }
  if (program === 'bash') return files(args) ?? (args[0] && existsSync(join(ROOT, args[0])) ? null : `no such script: ${args[0]}`)
  if (MADE.has(program)) return null
  if (/^(\.\/|\.ci\/|examples\/|scripts\/)/.test(program)) return existsSync(join(ROOT, program)) ? null : `no such program: ${program}`
  if (OUTSIDE.has(program)) return null
  return `unknown program ${program}: add it to OUTSIDE with the page that says it is needed, or write the command another way`
}

describe('every fenced shell command of the docs runs as written after npm install', () => {
  for (const page of PAGES) {
    const found = blocks(readFileSync(join(ROOT, page), 'utf8'))
    if (!found.length) continue
    it(page, () => {
      for (const block of found) {
        const syntax = Bun.spawnSync(['bash', '-n'], { stdin: new TextEncoder().encode(block), stderr: 'pipe' })
        expect({ block, syntax: syntax.stderr.toString() }).toEqual({ block, syntax: '' })
        const problems = commands(block)
          .map((words) => [words.join(' '), problem(words)])
          .filter(([, p]) => p !== null)
        expect(problems).toEqual([])
      }
    })
  }

  it('refuses what it should: a bare bun, a missing script, file or npm script', () => {
    const block = [
      'bun examples/agents-swarm.ts',
      'npx bun examples/nothing-here.ts',
      'npm run no-such-script',
      'X=1 ./dist/arbor && npx arbor mcp   # fine',
      "curl -H 'a: #b' http://x | grep y",
      'api() { curl -s "http://x/$@"; }',
      'frobnicate --now',
    ].join('\n')
    expect(commands(block).map(problem)).toEqual([
      'a bare `bun` is not on PATH after npm install: write `npx bun …` or an npm script',
      'no such file: examples/nothing-here.ts',
      'package.json has no script no-such-script',
      null,
      null,
      null,
      null,
      null,
      null,
      'unknown program frobnicate: add it to OUTSIDE with the page that says it is needed, or write the command another way',
    ])
  })
})
