-- $1 project_id text, $2 ids text[]: for each node, its ancestors from the parent up (depth 1 = parent)
with recursive up as (
  select n.id as node_id, n.parent_id as ancestor_id, 1 as depth
  from nodes n
  where n.project_id = $1 and n.id = any($2::text[]) and n.parent_id is not null
  union all
  select up.node_id, a.parent_id, up.depth + 1
  from up
  join nodes a on a.project_id = $1 and a.id = up.ancestor_id
  where a.parent_id is not null and up.depth < 20
)
select up.node_id, up.depth, a.id, a.type, a.data ->> 'label' as label
from up
join nodes a on a.project_id = $1 and a.id = up.ancestor_id
order by up.node_id, up.depth
