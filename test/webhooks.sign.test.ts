import { describe, expect, it } from 'bun:test'
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import { newSecret, standardSignature } from '../src/webhooks/sign'

// Standard Webhooks signing moved to the `standardwebhooks` package (issue 27): the signatures must
// stay byte-identical to what receivers got before, the HMAC-SHA256 of `id.timestamp.body` keyed
// with the base64-decoded secret, which this test computes itself with node:crypto.
const reference = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')}`

describe('standardSignature', () => {
  it('is the known signature of the Standard Webhooks example', () => {
    // the example of the Standard Webhooks specification (its README and the library's tests)
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek'
    const body = '{"test": 2432232314}'
    expect(standardSignature(secret, id, 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
    expect(reference(secret, id, 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  it('is byte-identical to the HMAC computed with node:crypto, for any secret, id, time and body', () => {
    fc.assert(
      fc.property(
        fc.constant(null).map(() => newSecret()),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 4_102_444_800 }),
        fc.string({ unit: 'binary', maxLength: 2000 }),
        (secret, id, timestamp, body) => {
          expect(standardSignature(secret, id, timestamp, body)).toBe(reference(secret, id, timestamp, body))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('verifies with the library on the receiving side', () => {
    const secret = newSecret()
    const body = JSON.stringify({ event: 'node.added', label: 'Zahlung per SEPA – ✓' })
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      'webhook-id': 'd1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardSignature(secret, 'd1', timestamp, body),
    }
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
  })
})
