-- $1 user_id text, $2 key text, $3 status_code integer, $4 response jsonb
update idempotency_keys set status_code = $3, response = $4::jsonb where user_id = $1 and key = $2
