-- $1 project_id text, $2 root ids text[]: each root and everything beneath it, with depth
-- (roots 0) and the creation order used to lay the tree out depth-first
with recursive sub as (
  select id, type, parent_id, data, created_at, ord, rev, 0 as depth
  from nodes
  where project_id = $1 and id = any($2::text[])
  union all
  select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord, n.rev, sub.depth + 1
  from nodes n
  join sub on n.project_id = $1 and n.parent_id = sub.id
)
select id, type, parent_id, data, created_at, rev, depth from sub order by depth, created_at, ord
