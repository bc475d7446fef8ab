-- $1 project_id text: every node with its creation time, in creation order
select id, type, parent_id, data, created_at
from nodes
where project_id = $1
order by created_at, ord
