-- $1 id text, $2 user_id text, $3 key_hash text, $4 label text|null
insert into api_keys (id, user_id, key_hash, label)
values ($1, $2, $3, $4)
returning id
