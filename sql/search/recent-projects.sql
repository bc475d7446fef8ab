-- $1 seq bigint: projects with node events after seq $1, with their newest seq
select project_id, max(seq) as seq
from events
where seq > $1 and type in ('node.added', 'node.updated', 'node.deleted')
group by project_id
