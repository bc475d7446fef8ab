-- $1 user_id text, $2 key text, $3 status_code integer, $4 response jsonb
-- $4 is JSON text cast here: postgres.js would encode a string sent as jsonb a second time
update idempotency_keys set status_code = $3, response = $4::text::jsonb where user_id = $1 and key = $2
