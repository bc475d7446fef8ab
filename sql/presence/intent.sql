-- $1 project_id, $2 node_id, $3 fields text[], $4 now, $5 the writer's actor_key: the live edit
-- intent of another actor on one of these fields of this node (live.md, 4), the latest to end first.
select user_id, user_name, agent, via, field, expires_at
from presence
where project_id = $1 and node_id = $2 and field = any($3::text[]) and expires_at > $4 and actor_key <> $5
order by expires_at desc
limit 1
