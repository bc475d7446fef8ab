-- $1 id text, $2 user_id text, $3 key_hash text, $4 label text|null, $5 prefix text (the key's first 8 characters),
-- $6 scope_role text, $7 scope_projects text[]|null (live.md §6)
insert into api_keys (id, user_id, key_hash, label, prefix, scope_role, scope_projects)
values ($1, $2, $3, $4, $5, $6, $7)
returning id
