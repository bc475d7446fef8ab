-- $1 project_id text, $2 root ids text[]: each root and everything beneath it, with depth
-- (roots 0) and the creation order used to lay the tree out depth-first.
-- The roots are found by a lateral probe of the primary key and each level's children by one of
-- nodes_parent, each with offset 0, which the planner keeps as written: as a join, a planner
-- without statistics (a table filled a moment ago: PGlite before its maintenance loop's first
-- analyze, PostgreSQL before autovacuum's) hashed every node of the project to find a leaf's no
-- children, and the generic plan found the roots by reading every node of the project and
-- filtering on `id = any($2)`: a delete cost what the project holds.
-- The array is read through a sub-select and the project carried as a column of the rows, as
-- get-many.sql does, so the plan cache keeps the generic plan rather than planning the statement
-- again on every run (bench/writes.md "Twelfth pass: the other lists of ids").
with recursive sub as (
  select root.project_id, n.id, n.type, n.parent_id, n.data, n.created_at, n.ord, n.rev, 0 as depth
  from (select distinct $1::text as project_id, unnest((select $2::text[])) as id) as root
  cross join lateral (
    select r.id, r.type, r.parent_id, r.data, r.created_at, r.ord, r.rev
    from nodes r
    where r.project_id = root.project_id and r.id = root.id
    offset 0
  ) n
  union all
  select sub.project_id, n.id, n.type, n.parent_id, n.data, n.created_at, n.ord, n.rev, sub.depth + 1
  from sub
  cross join lateral (
    select c.id, c.type, c.parent_id, c.data, c.created_at, c.ord, c.rev
    from nodes c
    where c.project_id = sub.project_id and c.parent_id = sub.id
    offset 0
  ) n
)
select id, type, parent_id, data, created_at, rev, depth from sub order by depth, created_at, ord
