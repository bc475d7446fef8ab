-- $1 project_id text, $2 ids text[]
-- a write reads the nodes it will change with their rows locked: two concurrent updates of one
-- node (on PostgreSQL) then run one after the other, and the second merges into what the first
-- wrote instead of writing back a copy read before it (a lost update). In id order (the ids
-- sorted, each locked as its probe finds it), so two writes take their locks alike; a deadlock
-- that still happens is retried by db.tx.
-- Each id is a lateral probe of the primary key, as get-many.sql finds them: as
-- `id = any($2)` the generic plan read every node of the project for a few ids.
select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev, n.field_revs
from (select distinct $1::text as project_id, unnest((select $2::text[])) as id order by id) as k
cross join lateral (
  select r.id, r.type, r.parent_id, r.data, r.created_at, r.rev, r.field_revs
  from nodes r
  where r.project_id = k.project_id and r.id = k.id
  offset 0
  for update
) n
order by n.id
