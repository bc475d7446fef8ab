-- $1 key_hash text: the user behind a live (unrevoked) API key, with the key's scope (live.md §6)
select u.id, u.name, u.tier, u.status, u.lapsed, u.contributor, u.credits_used, u.credits_limit, u.created_at,
  k.id as key_id, k.scope_role, k.scope_projects
from api_keys k
join users u on u.id = k.user_id
where k.key_hash = $1 and k.revoked_at is null
