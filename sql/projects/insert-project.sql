-- $1 id text, $2 name text, $3 owner_id text; nothing on conflict: the caller reports the taken id
insert into projects (id, name, owner_id)
values ($1, $2, $3)
on conflict (id) do nothing
returning id, name, archived
