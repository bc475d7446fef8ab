-- $1 id text, $2 name text
update projects set name = $2 where id = $1 returning id, name
