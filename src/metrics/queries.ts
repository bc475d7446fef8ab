import webhookDeliveriesSql from '../../sql/metrics/webhook-deliveries.sql' with { type: 'text' }
import { type Db, one } from '../db/port'

export const webhookDeliveryCounts = async (db: Db) =>
  (await one<{ pending: number; failed: number }>(db, webhookDeliveriesSql)) ?? { pending: 0, failed: 0 }
