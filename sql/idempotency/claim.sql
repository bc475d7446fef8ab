-- $1 user_id text, $2 key text, $3 request_hash text
-- Claims the key for this request (held: its write's transaction locks the record while it runs). An existing row is taken over only when it has expired
-- (24 h) or was left running by a process that died (no answer for 10 minutes). Returns a
-- row only when this request owns the key; the primary key makes replicas agree.
insert into idempotency_keys (user_id, key, request_hash, held)
values ($1, $2, $3, true)
on conflict (user_id, key) do update
  set request_hash = excluded.request_hash, status_code = null, response = null, created_at = now(), held = true
  where idempotency_keys.created_at < now() - interval '24 hours'
     or (idempotency_keys.status_code is null and idempotency_keys.created_at < now() - interval '10 minutes')
returning key
