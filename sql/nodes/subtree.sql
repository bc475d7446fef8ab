-- $1 project_id text, $2 root ids text[]: each root and everything beneath it, with depth
-- (roots 0) and the creation order used to lay the tree out depth-first.
-- Each level's children are found by a lateral probe of nodes_parent with offset 0, which the
-- planner keeps as written: as a join, a planner without statistics (a table filled a moment ago:
-- PGlite before its maintenance loop's first analyze, PostgreSQL before autovacuum's) hashed every
-- node of the project to find a leaf's no children, so a delete cost what the project holds.
with recursive sub as (
  select id, type, parent_id, data, created_at, ord, rev, 0 as depth
  from nodes
  where project_id = $1 and id = any($2::text[])
  union all
  select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord, n.rev, sub.depth + 1
  from sub
  cross join lateral (
    select c.id, c.type, c.parent_id, c.data, c.created_at, c.ord, c.rev
    from nodes c
    where c.project_id = $1 and c.parent_id = sub.id
    offset 0
  ) n
)
select id, type, parent_id, data, created_at, rev, depth from sub order by depth, created_at, ord
