-- $1 project_id text, $2 ids text[]: for each node, its ancestors from the parent up (depth 1 = parent)
-- Every node is found by a lateral probe of the primary key (offset 0 keeps it as written), as
-- sql/nodes/subtree.sql finds its roots: as `id = any($2)` and joins, the generic plan of the
-- prepared statement read every node of the project for the ids and again for the ancestors
-- (nodes_order or nodes_parent, a sequential scan once analyzed): a few nodes cost the project.
-- The array is read through a sub-select and the project carried as a column of the rows, as
-- sql/nodes/get-many.sql does, so the plan cache keeps the generic plan rather than planning the
-- statement again on every run (bench/writes.md "Twelfth pass: the other lists of ids").
with recursive up as (
  select k.project_id, n.id as node_id, n.parent_id as ancestor_id, 1 as depth
  from (select distinct $1::text as project_id, unnest((select $2::text[])) as id) as k
  cross join lateral (
    select r.id, r.parent_id
    from nodes r
    where r.project_id = k.project_id and r.id = k.id and r.parent_id is not null
    offset 0
  ) n
  union all
  select up.project_id, up.node_id, a.parent_id, up.depth + 1
  from up
  cross join lateral (
    select p.parent_id
    from nodes p
    where p.project_id = up.project_id and p.id = up.ancestor_id and p.parent_id is not null
    offset 0
  ) a
  where up.depth < 20
)
select up.node_id, up.depth, a.id, a.type, a.data ->> 'label' as label
from up
cross join lateral (
  select p.id, p.type, p.data
  from nodes p
  where p.project_id = up.project_id and p.id = up.ancestor_id
  offset 0
) a
order by up.node_id, up.depth
