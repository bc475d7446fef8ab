-- $1 project_id text, $2 ids text[], $3 node_id text|null, $4 node jsonb|null: delete these nodes;
-- with $3, the node deleted by name ($4, as it stood) is logged to the changelog in the same
-- statement. Returns a row per node deleted (id) and, with $3, one for the changelog entry
-- (changelog_id). The insert's condition is on parameters alone, checked once: it leaves the
-- delete's plan as it is.
-- Each id joined to its row by the primary key (sql/nodes/get-many.sql says why it is not
-- `id = any($2)`). A delete's target cannot be a lateral probe, so the ids' rows are costed low:
-- the limit (the array's length, which no id list exceeds) counts as a tenth of them, and a probe
-- of the key for each costs less than scanning the table, whatever its statistics, above a few
-- hundred nodes. The join's quals are checked again on a row a concurrent update changed, as
-- `id = any($2)` was.
with logged as (
  insert into changelog (project_id, node_id, node)
  select $1, $3, $4::jsonb
  where $3::text is not null
  returning id
), gone as (
  delete from nodes n
  using (
    select distinct $1::text as project_id, unnest((select $2::text[])) as id
    limit (select cardinality($2::text[]))
  ) as k
  where n.project_id = k.project_id and n.id = k.id
  returning n.id
)
select id as changelog_id, null as id from logged
union all
select null, id from gone
