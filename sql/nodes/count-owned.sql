-- $1 owner_id text: nodes across every project the user owns (the free-tier cap)
select count(*)::int as count
from nodes n
join projects p on p.id = n.project_id
where p.owner_id = $1
