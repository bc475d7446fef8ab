-- $1 embedder text: projects with nodes, those of them whose vectors from this embedder are not known to be complete (the background backfill, after a first start or a change of model, has not reached them), and their nodes
select count(*)::int as projects,
       (count(*) filter (where b.project_id is null))::int as waiting,
       (coalesce(sum(p.nodes) filter (where b.project_id is null), 0))::int as waiting_nodes
from (select project_id, count(*) as nodes from nodes group by project_id) p
left join search_backfill b on b.project_id = p.project_id and b.embedder = $1
