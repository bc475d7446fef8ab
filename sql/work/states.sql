-- $1 project_id text, $2 node_ids text[]: whether each of these work items is open and blocked
-- (a node without a row is not a work item)
select node_id, open, blocked
from work_items
where project_id = $1 and node_id = any($2::text[])
