-- $1 user_id text
select count(*)::int as count from api_keys where user_id = $1 and revoked_at is null
