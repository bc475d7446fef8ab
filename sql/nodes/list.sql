-- $1 project_id text, $2 type text|null, $3 iteration text|null: in creation order
select id, type, parent_id, data, rev
from nodes
where project_id = $1
  and ($2::text is null or type = $2)
  and ($3::text is null or (type in ('job', 'task') and data ->> 'iteration' = $3))
order by created_at, ord
