-- $1 project_id text, $2 token_hash text, $3 expires_at timestamptz, $4 now timestamptz: extend
-- a live claim; no row when the token is unknown, expired or released
update claims set expires_at = $3
where project_id = $1 and token_hash = $2 and expires_at > $4
returning node_id, agent, expires_at
