-- no parameters: where a read of the events outbox stands.
-- horizon: the start of the oldest transaction still open in another session (else now).
-- Outbox rows carry created_at = their transaction's start, so every event a later read can
-- newly see has created_at >= this horizon: a reader re-reads from there and skips what it has.
-- pg_stat_activity is not a snapshot, though: a later read may report an older start than an
-- earlier one did (an idle connection's next transaction can show its previous statement's
-- time), so the horizon only narrows the re-read and does not decide it. xmin does:
-- xmin: the oldest transaction id still running as this statement sees it (xid8, as text). A
-- transaction that commits later has an id at or above it, so an event whose txid is below
-- the xmin of the last read was visible to that read and is never read again.
select least(now(), coalesce(min(xact_start), now())) as horizon,
  pg_snapshot_xmin(pg_current_snapshot())::text as xmin
from pg_stat_activity
where xact_start is not null and pid <> pg_backend_pid() and backend_type = 'client backend'
