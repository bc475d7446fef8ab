-- $1 id text
select id, name, tier, status, lapsed, contributor, credits_used, credits_limit, created_at
from users
where id = $1
