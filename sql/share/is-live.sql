-- $1 project_id text, $2 token text, $3 now timestamptz: whether the link is live (one row) or not (none)
select token from share_tokens
where project_id = $1 and token = $2
  and active and revoked_at is null and (expires_at is null or expires_at > $3)
