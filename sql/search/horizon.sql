-- no parameters: the start of the oldest transaction still open in another session (else now).
-- Outbox rows carry created_at = their transaction's start, so every event a later read can
-- newly see has created_at >= this horizon: a reader re-reads from there and skips what it has.
select least(now(), coalesce(min(xact_start), now())) as horizon
from pg_stat_activity
where xact_start is not null and pid <> pg_backend_pid() and backend_type = 'client backend'
