-- $1 token text, $2 project_id text, $3 created_by text, $4 settings jsonb, $5 created_at timestamptz,
-- $6 expires_at timestamptz|null
insert into share_tokens (token, project_id, created_by, settings, created_at, expires_at)
values ($1, $2, $3, $4::jsonb, $5, $6)
returning token, settings, created_at, expires_at, revoked_at, active
