-- $1 project_id text, $2 parent_id text, $3 id text: same parent, the node itself excluded
select id, type, parent_id, data, created_at, rev
from nodes
where project_id = $1 and parent_id = $2 and id <> $3
order by created_at, ord
