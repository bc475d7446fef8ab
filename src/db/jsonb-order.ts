/**
 * A JSON value with its objects' keys in the order a `jsonb` column gives them back: shorter keys
 * first, keys of one length in the byte order of their UTF-8 (PostgreSQL's jsonb, both servers),
 * at every depth. A write that keeps a value it stored, instead of reading it back, keeps it in
 * this order, so that what reads it later in the write (an update's change names its `fields` in
 * its before's key order, and compares nested values as text) sees what a read would have given.
 * As JSON, a key whose value is undefined is left out and an undefined item is null. The value
 * itself is returned when it already is so; otherwise a copy (the value given is never changed).
 */
export function jsonbOrdered<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i] === undefined ? null : jsonbOrdered(value[i])
      if (item !== value[i]) (copy ??= [...value])[i] = item
    }
    return (copy ?? value) as T
  }
  const object = value as Record<string, unknown>
  const keys = Object.keys(object)
  let changed = false
  for (let i = 1; i < keys.length && !changed; i++) changed = jsonbKeyOrder(keys[i - 1]!, keys[i]!) > 0
  const ordered: Record<string, unknown> = {}
  for (const k of changed ? keys.sort(jsonbKeyOrder) : keys) {
    const v = object[k]
    if (v === undefined) {
      changed = true
      continue
    }
    const inner = jsonbOrdered(v)
    changed ||= inner !== v
    // an own key, as JSON.parse makes it (an assignment to __proto__ would set the prototype)
    if (k === '__proto__') Object.defineProperty(ordered, k, { value: inner, enumerable: true, writable: true, configurable: true })
    else ordered[k] = inner
  }
  return (changed ? ordered : value) as T
}

/** a character outside ASCII (whose UTF-8 is longer than one byte) */
const NON_ASCII = /[\u0080-\uffff]/

/** jsonb's order of two object keys: by the length of their UTF-8, then byte by byte. */
export function jsonbKeyOrder(a: string, b: string): number {
  if (!NON_ASCII.test(a) && !NON_ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
  const x = Buffer.from(a, 'utf8')
  const y = Buffer.from(b, 'utf8')
  return x.length - y.length || Buffer.compare(x, y)
}
