-- $1 after_project text, $2 after_id text, $3 limit int: every node of every project, keyset-paged (rebuild)
select project_id, id, type, parent_id, data, rev
from nodes
where (project_id, id) > ($1, $2)
order by project_id, id
limit $3
