-- $1 project_id text, $2 now timestamptz: the project's live claims
select node_id, agent, expires_at
from claims
where project_id = $1 and expires_at > $2
