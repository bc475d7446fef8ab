-- $1 project_id text, $2 user_id text
delete from project_members where project_id = $1 and user_id = $2 returning user_id
