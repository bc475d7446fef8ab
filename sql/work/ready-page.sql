-- $1 project_id text, $2 iteration text|null, $3 now timestamptz, $4 after jsonb|null, $5 limit integer:
-- the ready work items in GET /ready's order (open, not blocked, not held by a claim live at $3),
-- from the index of work_items; $4 ([urgent, iter_rank, focus, created_at, ord] of the last row
-- of the previous page) continues after that row
select w.node_id, w.type, w.approach_id,
  jsonb_build_array(w.urgent, w.iter_rank, w.focus, w.created_at, w.ord) as sort_key
from work_items w
where w.project_id = $1 and w.open and not w.blocked
  and ($2::text is null or w.iteration = $2)
  and ($4::jsonb is null or (w.urgent, w.iter_rank, w.focus, w.created_at, w.ord) > (
    ($4::jsonb ->> 0)::smallint, ($4::jsonb ->> 1)::integer, ($4::jsonb ->> 2)::smallint,
    ($4::jsonb ->> 3)::timestamptz, ($4::jsonb ->> 4)::bigint))
  and not exists (
    select 1 from claims c where c.project_id = w.project_id and c.node_id = w.node_id and c.expires_at > $3
  )
order by w.urgent, w.iter_rank, w.focus, w.created_at, w.ord
limit $5
