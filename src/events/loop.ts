import type { Loop } from '../loop'
import { deleteExpiredEvents } from './service'

/** Hourly: events past the 7-day window go, with their finished webhook deliveries. */
export const eventRetentionLoop: Loop = {
  name: 'events-retention',
  everySeconds: () => 3600,
  tick: (deps, now) => deleteExpiredEvents(deps, now),
}
