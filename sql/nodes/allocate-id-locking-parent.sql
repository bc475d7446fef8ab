-- $1 project_id text, $2 type text, $3 parent id text: allocate-ids.sql for one node and, in the
-- same statement, lock-many.sql for the parent it goes under (its columns null when there is no
-- such node). The counter's row is locked first, then the parent's (the lateral read runs for the
-- counter's row), the order in which an add that reads its parent after its id takes them.
with c as (
  insert into node_counters (project_id, type, last)
  values ($1, $2, 1)
  on conflict (project_id, type) do update set last = node_counters.last + 1
  returning last
)
select c.last, p.id, p.type, p.parent_id, p.data, p.created_at, p.rev, p.field_revs
from c
left join lateral (
  select id, type, parent_id, data, created_at, rev, field_revs
  from nodes
  where project_id = $1 and id = $3
  for update
) p on true
