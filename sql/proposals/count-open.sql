-- $1 project_id text: how many of the project's proposals are open
select count(*)::int as count from proposals where project_id = $1 and status = 'open'
