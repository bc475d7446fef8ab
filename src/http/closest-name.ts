/**
 * The name a client most likely meant (a misspelt action, a top-level key such as `projectID`):
 * used by mutate's tips, and the one misspelt-key tip for a required field sent under another name.
 */

/**
 * For the first `<name> is required` among `messages` whose name `input` (a query string or a
 * body) lacks while it has a top-level key that looks like its misspelling (`projectID` for
 * `projectId`, issue 55): "The body has `projectID`: did you mean `projectId`?", or null.
 */
export function misspeltKeyTip(where: 'query' | 'body', input: unknown, messages: readonly string[]): string | null {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return null
  for (const message of messages) {
    const field = /^(\w+) is required\b/.exec(message)?.[1]
    if (!field || Object.hasOwn(input, field)) continue
    const key = Object.keys(input)
      .slice(0, 50)
      .find((k) => closestName(k, [field]) === field)
    if (key) return `The ${where === 'query' ? 'query string' : 'body'} has \`${key.slice(0, 100)}\`: did you mean \`${field}\`?`
  }
  return null
}

/** The name of `names` that `name` most likely meant: within a third of its length in edits (at least 1, at most 3), or null. */
export function closestName(name: string, names: Iterable<string>): string | null {
  const lower = name.toLowerCase()
  let best: string | null = null
  let bestDistance = Math.min(3, Math.max(1, Math.floor(name.length / 3))) + 1
  for (const candidate of names) {
    const d = distance(lower, candidate.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best
}

/** Levenshtein distance; names are short (an action, a key), so the plain table is enough. */
function distance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Number.POSITIVE_INFINITY
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}
