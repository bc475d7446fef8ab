-- no parameters: every user, oldest first, never key material
select id, name, tier, status, lapsed, contributor, credits_used, credits_limit, created_at
from users
order by created_at, id
