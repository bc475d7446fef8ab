-- $1 project_id text, $2 upto bigint, $3 view text: applied commands leave the view's queue
delete from view_commands where project_id = $1 and view = $3 and seq <= $2
