-- $1 project_id text, $2 now timestamptz, $3 after jsonb|null, $4 limit integer: the ready work
-- items in GET /ready's order (open, not blocked, not held by a claim live at $2), from
-- work_items_ready; $3 ([urgent, iter_rank, focus, created_at, ord] of the last row of the
-- previous page) continues after that row. One iteration's: ready-page-iteration.sql.
select w.node_id, w.type, w.approach_id,
  jsonb_build_array(w.urgent, w.iter_rank, w.focus, w.created_at, w.ord) as sort_key
from work_items w
where w.project_id = $1 and w.open and not w.blocked
  and ($3::jsonb is null or (w.urgent, w.iter_rank, w.focus, w.created_at, w.ord) > (
    ($3::jsonb ->> 0)::smallint, ($3::jsonb ->> 1)::integer, ($3::jsonb ->> 2)::smallint,
    ($3::jsonb ->> 3)::timestamptz, ($3::jsonb ->> 4)::bigint))
  and not exists (
    select 1 from claims c where c.project_id = w.project_id and c.node_id = w.node_id and c.expires_at > $2
  )
order by w.urgent, w.iter_rank, w.focus, w.created_at, w.ord
limit $4
