import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import type { Config } from '../config'

/**
 * Stored answers that carry secrets (a claim's claimTokens) are kept sealed: AES-256-GCM with a
 * key that lives only in the process's configuration (REPLAY_SECRET, else derived from
 * ADMIN_TOKEN, which replicas share), so a backup or a pg_dump of the idempotency records shows
 * no token, while a retry with the same Idempotency-Key still gets its answer. Without either
 * setting nothing can seal: the answer is stored without its body and a replay is refused.
 */
export const SEALED = '$sealed'

/** The secret the seal key is derived from, or undefined when the process has none. */
export const replaySecretOf = (config: Pick<Config, 'replaySecret' | 'adminToken'>) => config.replaySecret ?? config.adminToken

const keyOf = (secret: string) => createHash('sha256').update('arbor idempotent replay\u0000').update(secret).digest()

/** The body to store in place of `body`: `{$sealed: "v1.<iv>.<ciphertext+tag>"}`, or `{$sealed: null}` without a secret. */
export function seal(secret: string | undefined, body: Record<string, unknown>): Record<string, unknown> {
  if (secret === undefined) return { [SEALED]: null }
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv)
  const data = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final(), cipher.getAuthTag()])
  return { [SEALED]: `v1.${iv.toString('base64')}.${data.toString('base64')}` }
}

export const isSealed = (stored: Record<string, unknown>) => Object.hasOwn(stored, SEALED)

/** The answer a sealed body holds, or null when this process cannot open it (no secret, another secret, tampered). */
export function unseal(secret: string | undefined, stored: Record<string, unknown>): Record<string, unknown> | null {
  const sealed = stored[SEALED]
  if (secret === undefined || typeof sealed !== 'string') return null
  const [version, iv, data] = sealed.split('.')
  if (version !== 'v1' || !iv || !data) return null
  try {
    const bytes = Buffer.from(data, 'base64')
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), Buffer.from(iv, 'base64'))
    decipher.setAuthTag(bytes.subarray(bytes.length - 16))
    const text = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8')
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return null // another key or a changed row: the caller refuses the replay and says why
  }
}
