-- $1 id text, $2 owner_id text, $3 archived boolean: only the owner's own project matches
update projects set archived = $3
where id = $1 and owner_id = $2
returning id, name, archived
