-- $1 project_id text, $2 now timestamptz, $3 created_by text|null (null: every link; else only
-- the links that user minted). Newest first; active is false once revoked or expired, whether
-- or not the expiry loop has run yet
select token, settings, created_at, expires_at, revoked_at,
  (active and revoked_at is null and (expires_at is null or expires_at > $2)) as active
from share_tokens
where project_id = $1 and ($3::text is null or created_by = $3)
order by created_at desc, seq desc
