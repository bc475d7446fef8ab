-- $1 channel text, $2 payload text: a replica's renewal marker or acknowledgement
-- (src/revisions/replicas.ts). A notification gives its transaction an id, whose commit would
-- wait for the disk; this one need not (a marker lost in a crash is waited for by nobody: the
-- writers waiting on it wait out its sender's last renewal), so it commits without that wait.
select set_config('synchronous_commit', 'off', true) as relaxed, pg_notify($1, $2) as sent
