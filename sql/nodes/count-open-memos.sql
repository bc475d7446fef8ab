-- $1 project_id text: memos waiting in the inbox
select count(*)::int as count
from nodes
where project_id = $1 and type = 'task' and data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done'
