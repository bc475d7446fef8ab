-- $1 id text
select id, user_id, revoked_at from api_keys where id = $1
