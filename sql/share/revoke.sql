-- $1 project_id text, $2 token text, $3 now timestamptz, $4 created_by text|null (null: any
-- link; else only one that user minted): revokes a live link of this project; no row back
-- when it is unknown, already revoked, expired, or (with $4) another's
update share_tokens set revoked_at = $3, active = false
where project_id = $1 and token = $2
  and active and revoked_at is null and (expires_at is null or expires_at > $3)
  and ($4::text is null or created_by = $4)
returning token
