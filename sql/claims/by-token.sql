-- $1 project_id text, $2 token_hash text: the claim a token was given for, live or not
select node_id, agent, expires_at
from claims
where project_id = $1 and token_hash = $2
