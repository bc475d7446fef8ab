import { createHmac, randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/**
 * One secret serves two signature schemes. It is a Standard Webhooks secret (`whsec_` + the
 * base64 of 32 random bytes), so receivers can verify `webhook-signature` with any Standard
 * Webhooks library; X-Arbor-Signature is keyed with the whole secret string as UTF-8 bytes
 * (docs/reference/events.md), which is what a receiver pasting the secret into an HMAC call does.
 */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the secret string's UTF-8 bytes. */
export function arborSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`
}

/**
 * Standard Webhooks `v1,<base64 HMAC>` over `id.timestamp.body`, keyed with the decoded secret,
 * by the scheme's own reference library (the one its receivers verify with), so the two sides
 * cannot drift apart on the secret's decoding or the signed string.
 */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), body)
}

/** Every header of one attempt. `timestamp` is in seconds, as Standard Webhooks wants it. */
export function deliveryHeaders(input: { id: string; event: string; secret: string; body: string; timestamp: number }) {
  return {
    'content-type': 'application/json',
    'user-agent': 'Arbor-Webhooks/1',
    'x-arbor-event': input.event,
    'x-arbor-delivery': input.id,
    'x-arbor-signature': arborSignature(input.secret, input.body),
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': standardSignature(input.secret, input.id, input.timestamp, input.body),
  }
}
