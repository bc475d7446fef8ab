-- $1 project_id text, $2 upto bigint: applied commands leave the queue
delete from view_commands where project_id = $1 and seq <= $2
