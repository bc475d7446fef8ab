-- $1 limit integer: tasks the background classifier has not looked at yet, oldest first;
-- skip locked lets replicas share the work. A project an import still writes (migration 0029) waits
-- until it is done: nothing but the import writes it meanwhile
select project_id, id, data
from nodes
where type = 'task' and classified_at is null
  and project_id not in (select id from projects where import_lease is not null)
order by created_at
limit $1
for update skip locked
