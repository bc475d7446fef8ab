-- $1 project_id text, $2 id text
-- lock-many.sql for one id (an add's parent, a batch's one parent): the same row, locked the same
-- way. `id = $2` rather than `id = any($2)`: a prepared statement's generic plan costs an array
-- parameter as ten ids, so when it was made on a table no analyze had seen (PGlite between its
-- maintenance loop's passes, PostgreSQL before autovacuum's) it found the ids by reading every
-- node of the project (nodes_order) and filtering them, and kept that plan as the project grew.
-- One key's equality is one row of nodes_pkey in any plan.
select id, type, parent_id, data, created_at, rev, field_revs
from nodes
where project_id = $1 and id = $2
for update
