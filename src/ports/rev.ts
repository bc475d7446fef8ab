/**
 * A revision as the API shows it (live.md, 1): opaque text made of the target's stored rev (a
 * number from one sequence, sql/migrations/0020-revisions.sql) and a check of the target it
 * belongs to, so that a rev of another node or iteration is known for one its target never had.
 * A leaf: every module that answers nodes or iterations formats their rev here.
 */
import { Type } from '@sinclair/typebox'
import { ruled } from './schema-rules'

export type RevKind = 'node' | 'iteration'

/** FNV-1a (32 bits) of `kind:id:seq`, four base-36 characters: cheap enough for every node of a tree read. */
function check(kind: RevKind, id: string, seq: string): string {
  let h = 0x811c9dc5
  const text = `${kind}:${id}:${seq}`
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return (h % 1_679_616).toString(36).padStart(4, '0') // 36^4
}

/** The rev text of a stored rev (a bigint column, read as text, number or bigint by the driver). */
export function formatRev(kind: RevKind, id: string, stored: unknown): string {
  const seq = BigInt(stored as string | number | bigint)
  return `${seq.toString(36)}-${check(kind, id, seq.toString())}`
}

/** The stored rev a rev text names for this target, or null when the target never had it (another target's, or not a rev). */
export function parseRev(kind: RevKind, id: string, rev: string): bigint | null {
  const m = /^([0-9a-z]{1,13})-([0-9a-z]{4})$/.exec(rev)
  if (!m) return null
  let seq = 0n
  for (const c of m[1]!) seq = seq * 36n + BigInt(Number.parseInt(c, 36))
  return check(kind, id, seq.toString()) === m[2] ? seq : null
}

/** `ifRev` of a write (live.md, 1): the rev the caller read; refused with 409 stale_write when a field it sets changed since. */
export const IfRev = ruled(
  Type.String({ minLength: 1, maxLength: 100, description: 'the rev you read; 409 stale_write if a field you set changed since' }),
  'ifRev must be the rev string of the node or iteration you read',
)
