-- $1 project_id text, $2 ids text[]: these nodes and every node above them, each once
with recursive up as (
  select id, type, parent_id, data, created_at, rev
  from nodes
  where project_id = $1 and id = any($2::text[])
  union
  select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
  from nodes n
  join up on n.project_id = $1 and n.id = up.parent_id
)
select id, type, parent_id, data, created_at, rev from up
