-- $1 now timestamptz: spent states past their expiry (the state itself is refused as expired by then)
delete from workflow_spent_states where expires_at < $1
returning digest
