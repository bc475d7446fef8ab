-- $1 project_id text, $2 ids text[]
select id, type, parent_id, data, created_at, rev
from nodes
where project_id = $1 and id = any($2::text[])
