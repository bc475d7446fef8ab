-- $1 project_id text, $2 node_ids text[], $3 now timestamptz: end the claims of these nodes (work
-- marked done); returns those that were live
with gone as (
  delete from claims where project_id = $1 and node_id = any($2::text[])
  returning node_id, agent, expires_at
)
select node_id, agent from gone where expires_at > $3
