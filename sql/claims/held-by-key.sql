-- $1 project_id text, $2 node_id text, $3 token_hash text, $4 key_id text, $5 now timestamptz:
-- whether the node's claim is live at $5, has this token and was taken with this key
select exists (
  select 1 from claims
  where project_id = $1 and node_id = $2 and token_hash = $3 and key_id = $4 and expires_at > $5
) as held
