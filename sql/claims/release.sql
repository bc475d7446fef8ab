-- $1 project_id text, $2 token_hash text, $3 now timestamptz: end a live claim; no row when the
-- token is unknown, expired or released
delete from claims
where project_id = $1 and token_hash = $2 and expires_at > $3
returning node_id, agent
