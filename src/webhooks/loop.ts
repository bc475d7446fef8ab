import type { Loop } from '../loop'
import { createDeliveryRunner, deliverDue } from './delivery'

/**
 * Webhook deliveries. First attempts run on the `events` wake-up that every write sends after
 * its commit; retries (and first attempts a crash interrupted) are claimed here every
 * SCHEDULER_INTERVAL_MS.
 */
export const webhookDeliveryLoop: Loop = {
  name: 'webhook-deliveries',
  everySeconds: (deps) => deps.config.schedulerIntervalMs / 1000,
  tick: (deps, now) => deliverDue(deps, now),
  onStart(deps) {
    const runner = createDeliveryRunner(deps)
    deps.onWake('events', runner.run)
    // a restart picks up what was due while the process was down, without waiting a full interval
    runner.run()
    return async () => {
      await runner.stop()
      await deps.webhookSender.stop()
    }
  },
}
