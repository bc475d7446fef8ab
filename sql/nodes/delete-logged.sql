-- $1 project_id text, $2 ids text[], $3 node_id text, $4 node jsonb: delete-many.sql with the node
-- deleted by name logged to the changelog in the same statement;
-- returns the changelog entry's id.
with logged as (
  insert into changelog (project_id, node_id, node) values ($1, $3, $4::jsonb)
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
select logged.id from logged
