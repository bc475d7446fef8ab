-- $1 project_id text, $2 iteration text|null, $3 now timestamptz: GET /ready's _meta before the
-- claims are taken out: open items not blocked (ready or claimed) and open items blocked, as the
-- writes keep them (work_counts, migration 0026), and of the first those held by a claim live at $3
select
  coalesce((select sum(c.unblocked) from work_counts c
   where c.project_id = $1 and ($2::text is null or c.iteration = $2)), 0)::integer as unblocked,
  (select count(*) from claims c
   join work_items w on w.project_id = c.project_id and w.node_id = c.node_id
   where c.project_id = $1 and c.expires_at > $3 and w.open and not w.blocked
     and ($2::text is null or w.iteration = $2))::integer as claimed,
  coalesce((select sum(c.blocked) from work_counts c
   where c.project_id = $1 and ($2::text is null or c.iteration = $2)), 0)::integer as blocked
