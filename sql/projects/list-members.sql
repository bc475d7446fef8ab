-- $1 project_id text: the owner first, then members in the order they joined
select u.id as user_id, u.name, 'owner' as role, 0 as rank, p.created_at as joined
from projects p join users u on u.id = p.owner_id
where p.id = $1
union all
select u.id, u.name, 'member', 1, m.created_at
from project_members m join users u on u.id = m.user_id
where m.project_id = $1
order by rank, joined, user_id
