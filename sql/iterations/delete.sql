-- $1 project_id text, $2 name text
delete from iterations where project_id = $1 and name = $2 and not system
returning name
