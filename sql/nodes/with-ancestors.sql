-- $1 project_id text, $2 ids text[]: these nodes and every node above them, each once
-- The nodes and each one's parent are found by lateral probes of the primary key (offset 0 keeps
-- them as written), as subtree.sql finds its roots. As `id = any($2)` and a join on the parent,
-- the generic plan of the prepared statement read every node of the project for the ids
-- (nodes_order, on a table no analyze had seen or one with thousands of small projects) and, for
-- each level, hashed or scanned the project again (a sequential scan once analyzed): a few ids'
-- ancestors cost what the project holds.
with recursive up as (
  select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
  from (select distinct unnest($2::text[]) as id) as k
  cross join lateral (
    select r.id, r.type, r.parent_id, r.data, r.created_at, r.rev
    from nodes r
    where r.project_id = $1 and r.id = k.id
    offset 0
  ) n
  union
  select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
  from up
  cross join lateral (
    select p.id, p.type, p.parent_id, p.data, p.created_at, p.rev
    from nodes p
    where p.project_id = $1 and p.id = up.parent_id
    offset 0
  ) n
)
select id, type, parent_id, data, created_at, rev from up
