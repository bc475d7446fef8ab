-- $1 project_id, $2 actor_key, $3 now: end the actor's presence; returns it when it was live.
delete from presence
where project_id = $1 and actor_key = $2
returning user_id, user_name, agent, via, node_id, field, note, (expires_at > $3) as live
