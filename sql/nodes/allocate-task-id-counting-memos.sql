-- $1 project_id text: allocate-ids.sql for one task and, in the same statement,
-- count-open-memos.sql (a task's add: the memo inbox it may overflow; the count as it stood
-- before this statement, as when it was a statement of its own sent first). The count is the one
-- the writes keep (migration 0049), read without a lock: the counter's row is locked, not the count's.
with c as (
  insert into node_counters (project_id, type, last)
  values ($1, 'task', 1)
  on conflict (project_id, type) do update set last = node_counters.last + 1
  returning last
)
select c.last, coalesce((select memos from node_open_memos where project_id = $1), 0) as memos
from c
