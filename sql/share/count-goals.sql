-- $1 project_id text, $2 ids jsonb (a string array): how many of them are goals of the project
select count(*)::int as count
from nodes
where project_id = $1 and type = 'goal' and id in (select jsonb_array_elements_text($2::jsonb))
