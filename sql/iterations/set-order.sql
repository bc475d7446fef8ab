-- $1 project_id text, $2 names text[]: sort_order becomes each name's position
update iterations i
set sort_order = o.n - 1
from unnest($2::text[]) with ordinality as o(name, n)
where i.project_id = $1 and i.name = o.name
