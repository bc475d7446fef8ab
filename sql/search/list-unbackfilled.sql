-- $1 embedder text, $2 limit int: projects with nodes whose vectors from this embedder are not known to be complete
select p.id
from projects p
where not exists (select 1 from search_backfill b where b.project_id = p.id and b.embedder = $1)
  and exists (select 1 from nodes n where n.project_id = p.id)
order by p.id
limit $2
