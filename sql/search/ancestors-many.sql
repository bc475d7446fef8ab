-- $1 project_id text, $2 ids text[]: for each node, its ancestors from the parent up (depth 1 = parent)
-- Every node is found by a lateral probe of the primary key (offset 0 keeps it as written), as
-- sql/nodes/subtree.sql finds its roots: as `id = any($2)` and joins, the generic plan of the
-- prepared statement read every node of the project for the ids and again for the ancestors
-- (nodes_order or nodes_parent, a sequential scan once analyzed): a few nodes cost the project.
with recursive up as (
  select n.id as node_id, n.parent_id as ancestor_id, 1 as depth
  from (select distinct unnest($2::text[]) as id) as k
  cross join lateral (
    select r.id, r.parent_id
    from nodes r
    where r.project_id = $1 and r.id = k.id and r.parent_id is not null
    offset 0
  ) n
  union all
  select up.node_id, a.parent_id, up.depth + 1
  from up
  cross join lateral (
    select p.parent_id
    from nodes p
    where p.project_id = $1 and p.id = up.ancestor_id and p.parent_id is not null
    offset 0
  ) a
  where up.depth < 20
)
select up.node_id, up.depth, a.id, a.type, a.data ->> 'label' as label
from up
cross join lateral (
  select p.id, p.type, p.data
  from nodes p
  where p.project_id = $1 and p.id = up.ancestor_id
  offset 0
) a
order by up.node_id, up.depth
