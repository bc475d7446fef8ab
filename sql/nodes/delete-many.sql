-- $1 project_id text, $2 ids text[]
-- Each id joined to its row by the primary key (sql/nodes/get-many.sql says why it is not
-- `id = any($2)`). A delete's target cannot be a lateral probe, so the ids' rows are costed low:
-- the limit (the array's length, which no id list exceeds) counts as a tenth of them, and a probe
-- of the key for each costs less than scanning the table, whatever its statistics, above a few
-- hundred nodes. The join's quals are checked again on a row a concurrent update changed, as
-- `id = any($2)` was.
delete from nodes n
using (
  select distinct $1::text as project_id, unnest((select $2::text[])) as id
  limit (select cardinality($2::text[]))
) as k
where n.project_id = k.project_id and n.id = k.id
returning n.id
