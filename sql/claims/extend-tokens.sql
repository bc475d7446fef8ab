-- $1 project_id text, $2 token_hashes text[], $3 now timestamptz: a write carried these live
-- claims' tokens: each lasts its own length (lease_seconds) from now again, never less than it did
update claims
set expires_at = greatest(expires_at, $3 + lease_seconds * interval '1 second')
where project_id = $1 and token_hash = any($2::text[]) and expires_at > $3
returning node_id, agent, expires_at
