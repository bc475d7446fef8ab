-- $1 now timestamptz: keys are remembered for 24 hours
delete from idempotency_keys where created_at < $1::timestamptz - interval '24 hours'
returning key
