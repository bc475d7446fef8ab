import { describe, expect, it } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'

// issue 55, item 11: a comment (or any text) in src/ that cites a document names one the
// repository has. A bare name (`errors.md`) is looked for beside the file, at the root, in docs/
// and in docs/reference/; a path (`docs/reference/limits.md`) from the root or the file's folder.
// The contract is written in the project's own words in docs/reference/ (its README lists the pages).
const ROOT = join(import.meta.dir, '..')

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(path)
    else if (/\.(ts|tsx|js|mjs|sql|html|css)$/.test(entry.name)) yield path
  }
}

/** Every `something.md` a text names, with its line number. */
export function citations(text: string): { name: string; line: number }[] {
  const out: { name: string; line: number }[] = []
  text.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/(?<![\w/.-])((?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w-]+\.md)(?![\w-])/g)) out.push({ name: m[1]!, line: i + 1 })
  })
  return out
}

/** Names that are not this repository's documents: the files of an OKF bundle (src/export, docs/reference/reads.md). */
const NOT_CITATIONS = /^(index\.md|(\.\.\/)?(goals|needs|approaches|jobs|tasks)\/[\w-]+\.md)$/

/** Where a citation in `file` resolves, or null. */
export function resolveCitation(file: string, name: string): string | null {
  const places = name.includes('/')
    ? [join(ROOT, name), join(dirname(file), name)]
    : [join(dirname(file), name), join(ROOT, name), join(ROOT, 'docs', name), join(ROOT, 'docs', 'reference', name)]
  return places.find((p) => existsSync(p)) ?? null
}

describe('documents cited in src/ exist', () => {
  it('every cited .md file is in the repository', () => {
    const missing: string[] = []
    for (const file of sources(join(ROOT, 'src')))
      for (const { name, line } of citations(readFileSync(file, 'utf8')))
        if (!NOT_CITATIONS.test(name) && !resolveCitation(file, name)) missing.push(`${relative(ROOT, file)}:${line} cites ${name}`)
    expect(missing).toEqual([])
  })

  it('finds a citation that does not resolve, and one that does', () => {
    const file = join(ROOT, 'src', 'app.ts')
    expect(citations('// see api.md, Limits, and docs/reference/limits.md; x.mdx and a.md5 are not').map((c) => c.name)).toEqual([
      'api.md',
      'docs/reference/limits.md',
    ])
    expect(resolveCitation(file, 'api.md')).toBeNull()
    expect(resolveCitation(file, 'self-hosting.md')).toBeNull()
    expect(resolveCitation(file, 'docs/reference/limits.md')).toBe(join(ROOT, 'docs', 'reference', 'limits.md'))
    expect(resolveCitation(file, 'limits.md')).toBe(join(ROOT, 'docs', 'reference', 'limits.md'))
    expect(resolveCitation(file, 'history.md')).toBe(join(ROOT, 'docs', 'history.md'))
  })
})
