-- $1 user_id text, $2 key text
select request_hash, status_code, response, held from idempotency_keys where user_id = $1 and key = $2
