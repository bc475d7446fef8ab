-- $1 limit integer: tasks the background classifier has not looked at yet, oldest first;
-- skip locked lets replicas share the work
select project_id, id, data
from nodes
where type = 'task' and classified_at is null
order by created_at
limit $1
for update skip locked
