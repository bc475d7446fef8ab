-- $1 id text, $2 scope_role text, $3 scope_projects text[]|null: a live key's new scope (the admin API); returns the key
update api_keys set scope_role = $2, scope_projects = $3
where id = $1 and revoked_at is null
returning id
