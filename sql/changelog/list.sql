-- $1 project_id text, $2 limit integer: newest first
select id, node_id, action, node, deleted_at
from changelog
where project_id = $1
order by id desc
limit $2
