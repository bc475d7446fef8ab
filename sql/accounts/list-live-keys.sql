-- $1 user_id text, $2 key_hash text (the caller's key, marked current); never key material
select id, label, coalesce(prefix, 'arb_') as prefix, created_at, last_used_at, key_hash = $2 as current,
  scope_role, scope_projects
from api_keys
where user_id = $1 and revoked_at is null
order by created_at, id
