-- $1 project_id text, $2 ids bigint[]: those of the project's changes, newest first
select id, at, user_id, user_name, key_id, agent, via, request_id, action, target_kind, target_id,
  target_type, before, after, fields, revert_of, proposal
from changes
where project_id = $1 and id = any($2::bigint[])
order by id desc
