-- $1 project_id text, $2 target_ids text[], $3 after_id bigint: every change of those targets
-- newer than $3, oldest first (what a revert's conflict check compares against)
select id, user_id, action, target_kind, target_id, before, after, fields
from changes
where project_id = $1 and target_id = any($2::text[]) and id > $3
order by id
