-- $1 project_id text, $2 ids text[]: these nodes and every node above them, each once
-- The nodes and each one's parent are found by lateral probes of the primary key (offset 0 keeps
-- them as written), as subtree.sql finds its roots. As `id = any($2)` and a join on the parent,
-- the generic plan of the prepared statement read every node of the project for the ids
-- (nodes_order, on a table no analyze had seen or one with thousands of small projects) and, for
-- each level, hashed or scanned the project again (a sequential scan once analyzed): a few ids'
-- ancestors cost what the project holds.
-- The array is read through a sub-select and the project carried as a column of the rows, as
-- get-many.sql does, so the plan cache keeps the generic plan rather than planning the statement
-- again on every run (bench/writes.md "Twelfth pass: the other lists of ids").
with recursive up as (
  select k.project_id, n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
  from (select distinct $1::text as project_id, unnest((select $2::text[])) as id) as k
  cross join lateral (
    select r.id, r.type, r.parent_id, r.data, r.created_at, r.rev
    from nodes r
    where r.project_id = k.project_id and r.id = k.id
    offset 0
  ) n
  union
  select up.project_id, n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
  from up
  cross join lateral (
    select p.id, p.type, p.parent_id, p.data, p.created_at, p.rev
    from nodes p
    where p.project_id = up.project_id and p.id = up.parent_id
    offset 0
  ) n
)
select id, type, parent_id, data, created_at, rev from up
