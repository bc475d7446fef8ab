import { randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `n` uniformly random base62 characters (rejection sampling keeps every character equally likely). */
export function randomBase62(n: number): string {
  let out = ''
  while (out.length < n) {
    for (const byte of randomBytes(n * 2)) {
      if (byte < 248 && out.length < n) out += BASE62[byte % 62]
    }
  }
  return out
}

/** `arb_` + 43 base62 characters: about 256 bits, above the 190 that docs/reference/authentication.md asks for. */
export function generateApiKey(): string {
  return `arb_${randomBase62(43)}`
}

/** Only this hash is stored. A key has 256 bits of entropy, so a fast hash is enough. */
export function hashApiKey(key: string): string {
  return Bun.SHA256.hash(key, 'hex') as string
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(16)}`
}
