-- $1 project_id text, $2 id text: one proposal of the project, held until the write commits (a
-- second apply, reject or withdrawal waits, then finds it closed)
select * from proposals where project_id = $1 and id = $2 for update
