-- $1 project_id text, $2 id text: one proposal of the project
select * from proposals where project_id = $1 and id = $2
