-- $1 project_id text, $2 node_id text: the most recent deletion of that node
select id, node_id, action, node, deleted_at, restored_at
from changelog
where project_id = $1 and node_id = $2
order by id desc
limit 1
