/**
 * The name a client most likely meant (a misspelt action, a top-level key such as `projectID`):
 * used by mutate's tips and by the error plugin's tip for a required field sent under another name.
 */

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
