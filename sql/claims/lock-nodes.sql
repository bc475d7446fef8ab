-- $1 project_id text, $2 node_ids text[]: the claims of these nodes, live or not, locked until the
-- transaction ends, so a write checked against them cannot race a new claim or a renewal
-- Each node's claim is a lateral probe of the primary key, the node ids sorted so the locks are
-- taken in their order (sql/nodes/get-many.sql says why): as `node_id = any($2)` the generic plan
-- read the project's claims and filtered on the nodes.
select c.node_id, c.agent, c.token_hash, c.expires_at
from (select distinct $1::text as project_id, unnest((select $2::text[])) as node_id order by node_id) as k
cross join lateral (
  select r.node_id, r.agent, r.token_hash, r.expires_at
  from claims r
  where r.project_id = k.project_id and r.node_id = k.node_id
  offset 0
  for update
) c
order by c.node_id
