-- $1 project_id text, $2 node_ids text[]: the claims of these nodes, live or not, locked until the
-- transaction ends, so a write checked against them cannot race a new claim or a renewal
select node_id, agent, token_hash, expires_at
from claims
where project_id = $1 and node_id = any($2::text[])
order by node_id
for update
