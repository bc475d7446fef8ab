-- $1 project_id text, $2 ids text[], $3 node_id text, $4 node jsonb: delete-many.sql with the node
-- deleted by name logged to the changelog in the same statement;
-- returns the changelog entry's id.
with logged as (
  insert into changelog (project_id, node_id, node) values ($1, $3, $4::jsonb)
  returning id
), gone as (
  delete from nodes where project_id = $1 and id = any($2::text[])
  returning id
)
select logged.id from logged
