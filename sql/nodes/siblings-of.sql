-- $1 project_id text, $2 id text: the node's siblings (same parent, itself excluded), found
-- without reading the node first, so it can run beside the other reads of a context walk
select s.id, s.type, s.parent_id, s.data, s.created_at, s.rev
from nodes n
join nodes s on s.project_id = n.project_id and s.parent_id = n.parent_id and s.id <> n.id
where n.project_id = $1 and n.id = $2
order by s.created_at, s.ord
