-- $1 project_id text, $2 ids text[]
-- a write reads the nodes it will change with their rows locked: two concurrent updates of one
-- node (on PostgreSQL) then run one after the other, and the second merges into what the first
-- wrote instead of writing back a copy read before it (a lost update). In id order, so two writes
-- take their locks alike; a deadlock that still happens is retried by db.tx.
select id, type, parent_id, data, created_at, rev, field_revs
from nodes
where project_id = $1 and id = any($2::text[])
order by id
for update
