import type { Loop } from '../loop'
import { expireAll } from './service'

/** Every 2 s: presence that ran out (30 s without a post) is deleted and its `gone` said on the stream. */
export const presenceExpiryLoop: Loop = {
  name: 'presence-expiry',
  everySeconds: () => 2,
  tick: (deps, now) => expireAll(deps, now),
}
