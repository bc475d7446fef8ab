-- $1 user_id text, $2 key text: the key's record, locked until the write's transaction ends, unless
-- another transaction holds it (then no row: that request is still running). A record left
-- without an answer by a process that died is free again as soon as its transaction rolled back,
-- so the retry runs the write instead of waiting for the 10 minutes of claim.sql.
select request_hash, status_code, response
from idempotency_keys
where user_id = $1 and key = $2
for update skip locked
