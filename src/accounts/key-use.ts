/**
 * When this process last recorded each key's use (`last_used_at`), so that a busy key costs one
 * write a minute, not one per request. The SQL repeats the minute rule, so several replicas
 * together still write a key at most about once a minute each.
 */
const EVERY_MS = 60_000
/** Keys remembered before the map is emptied: bounds memory; forgetting costs one extra write. */
const MAX_ENTRIES = 20_000

/** The clock of one app (its auth cache holds it): true when `hash`'s use should be written now (and notes that it is). */
export function createKeyUse(): (hash: string, now?: number) => boolean {
  const map = new Map<string, number>()
  return (hash, now = Date.now()) => {
    const last = map.get(hash)
    if (last !== undefined && now - last < EVERY_MS) return false
    if (map.size >= MAX_ENTRIES) map.clear()
    map.set(hash, now)
    return true
  }
}
