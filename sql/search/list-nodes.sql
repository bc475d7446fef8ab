-- $1 project_id text: every node with what search needs, in creation order
select id, type, parent_id, data, rev
from nodes
where project_id = $1
order by created_at, ord
