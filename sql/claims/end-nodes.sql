-- $1 project_id text, $2 node_ids text[], $3 now timestamptz: end the claims of these nodes (work
-- marked done); returns those that were live
-- Each node joined to its claim by the primary key, as sql/nodes/delete-many.sql deletes nodes:
-- as `node_id = any($2)` the generic plan read the project's claims and filtered on the nodes.
with gone as (
  delete from claims c
  using (
    select distinct $1::text as project_id, unnest((select $2::text[])) as node_id
    limit (select cardinality($2::text[]))
  ) as k
  where c.project_id = k.project_id and c.node_id = k.node_id
  returning c.node_id, c.agent, c.expires_at
)
select node_id, agent from gone where expires_at > $3
