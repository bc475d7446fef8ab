-- $1 project_id, $2 now: the project's live presence, oldest first.
select user_id, user_name, agent, via, node_id, field, note, since, expires_at
from presence
where project_id = $1 and expires_at > $2
order by since, actor_key
