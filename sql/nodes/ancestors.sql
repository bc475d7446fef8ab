-- $1 project_id text, $2 id text: the node itself, then each parent up to the root
with recursive up as (
  select id, type, parent_id, data, created_at, rev, 0 as depth
  from nodes
  where project_id = $1 and id = $2
  union all
  select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev, up.depth + 1
  from nodes n
  join up on n.project_id = $1 and n.id = up.parent_id
)
select id, type, parent_id, data, created_at, rev from up order by depth
