import { describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

// issue 43, item 5: every relative link of README.md, ARCHITECTURE.md, docs/, the examples'
// READMEs and the Dockerfile resolves, to a file and, when it names one, to a heading in it.
const ROOT = join(import.meta.dir, '..')
const MARKDOWN = [
  'README.md',
  'ARCHITECTURE.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(ROOT, 'examples'))
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => existsSync(join(ROOT, f))),
]

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of markdown.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!m) continue
    const slug = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

/** The text outside fenced code blocks and inline code spans. */
const withoutCode = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')

function markdownLinks(file: string): string[] {
  const text = withoutCode(readFileSync(join(ROOT, file), 'utf8'))
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
}

/** What a link points at that does not exist, or null. */
function broken(from: string, target: string): string | null {
  const [path, anchor] = target.split('#') as [string, string | undefined]
  const file = path === '' ? join(ROOT, from) : join(ROOT, dirname(from), decodeURIComponent(path))
  if (!existsSync(file)) return `${from}: ${target} (no such file)`
  if (anchor && statSync(file).isFile() && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor))
    return `${from}: ${target} (no heading #${anchor} in ${relative(ROOT, file)})`
  return null
}

describe('documentation links', () => {
  it('every relative link in README.md, ARCHITECTURE.md, docs/ and the examples resolves, anchors included', () => {
    const links = MARKDOWN.flatMap((file) => markdownLinks(file).map((target) => [file, target] as const))
    expect(links.length).toBeGreaterThan(50)
    expect(links.map(([file, target]) => broken(file, target)).filter(Boolean)).toEqual([])
  })

  it('every file the Dockerfile names exists', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    const named = [...text.matchAll(/\b((?:docs|scripts|src|sql|examples)\/[\w./-]*[\w-]|README\.md|package(?:-lock)?\.json)\b/g)].map(
      (m) => m[1]!,
    )
    expect(named.length).toBeGreaterThan(3)
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([])
    // a README section named in a comment must be one of README.md's headings
    const sections = [...text.matchAll(/README "([^"]+)"/g)].map((m) => m[1]!)
    const headings = readFileSync(join(ROOT, 'README.md'), 'utf8').match(/^#+ .*$/gm) ?? []
    expect(sections.filter((s) => !headings.some((h) => h.replace(/^#+ /, '') === s))).toEqual([])
  })
})
