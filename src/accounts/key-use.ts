import type { Db } from '../db/port'

/**
 * When this process last recorded each key's use (`last_used_at`), so that a busy key costs one
 * write a minute, not one per request. The SQL repeats the minute rule, so several replicas
 * together still write a key at most about once a minute each.
 */
const EVERY_MS = 60_000
/** Keys remembered before the map is emptied: bounds memory; forgetting costs one extra write. */
const MAX_ENTRIES = 20_000

const seen = new WeakMap<Db, Map<string, number>>()

/** True when `hash`'s use should be written now (and notes that it is). */
export function useIsDue(db: Db, hash: string, now = Date.now()): boolean {
  let map = seen.get(db.root)
  if (!map) seen.set(db.root, (map = new Map()))
  const last = map.get(hash)
  if (last !== undefined && now - last < EVERY_MS) return false
  if (map.size >= MAX_ENTRIES) map.clear()
  map.set(hash, now)
  return true
}
