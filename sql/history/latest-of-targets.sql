-- $1 project_id text, $2 target_ids text[], $3 limit integer: the newest changes of these targets,
-- newest first (a stale write names the latest change of each field it conflicts on, live.md 1)
select id, at, user_id, user_name, key_id, agent, via, target_kind, target_id, fields
from changes
where project_id = $1 and target_id = any($2::text[])
order by id desc
limit $3
