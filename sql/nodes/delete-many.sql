-- $1 project_id text, $2 ids text[]
delete from nodes where project_id = $1 and id = any($2::text[])
returning id
