-- $1 project_id text
select type, count(*)::int as count from nodes where project_id = $1 group by type
