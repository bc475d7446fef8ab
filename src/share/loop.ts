import type { Loop } from '../loop'
import { expireShares } from './service'

/** Every SCHEDULER_INTERVAL_MS: share links past their expiry are marked inactive. */
export const shareExpiryLoop: Loop = {
  name: 'share-expiry',
  everySeconds: (deps) => deps.config.schedulerIntervalMs / 1000,
  tick: (deps, now) => expireShares(deps, now),
}
