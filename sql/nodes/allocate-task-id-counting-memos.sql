-- $1 project_id text: allocate-ids.sql for one task and, in the same statement,
-- count-open-memos.sql (a task's add: the memo inbox it may overflow; the count as it stood
-- before this statement, as when it was a statement of its own sent first)
with c as (
  insert into node_counters (project_id, type, last)
  values ($1, 'task', 1)
  on conflict (project_id, type) do update set last = node_counters.last + 1
  returning last
)
select c.last, (
  select count(*)::int
  from nodes
  where project_id = $1 and type = 'task' and data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done'
) as memos
from c
