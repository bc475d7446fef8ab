-- $1 user_id text, $2 key text: a failed (5xx) first attempt frees the key for a retry
delete from idempotency_keys where user_id = $1 and key = $2 and status_code is null
