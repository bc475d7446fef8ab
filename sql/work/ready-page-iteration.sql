-- $1 project_id text, $2 iteration text, $3 now timestamptz, $4 after jsonb|null, $5 limit integer:
-- ready-page.sql's page, of the items of iteration $2 only. Every open item of an iteration holds
-- that iteration's rank (work_iter_ranks, migration 0016: kept by work_refresh and work_rerank),
-- so the iteration's items lie in two ranges of work_items_ready, its urgent ones (urgent 0) and
-- the others (1), each in GET /ready's order: each range is read from its start, as far as the
-- page needs (a name no iteration has, and the completed iterations, share the last rank: their
-- range holds the ready items of all of them, filtered by name).
with r as (
  select x.rank from work_iter_ranks($1) x where x.name = $2 or x.name is null order by x.name is null limit 1
)
select x.node_id, x.type, x.approach_id, jsonb_build_array(x.urgent, x.iter_rank, x.focus, x.created_at, x.ord) as sort_key
from (select 0::smallint as urgent union all select 1::smallint) u
cross join lateral (
  select w.node_id, w.type, w.approach_id, w.urgent, w.iter_rank, w.focus, w.created_at, w.ord
  from work_items w
  where w.project_id = $1 and w.open and not w.blocked and w.urgent = u.urgent and w.iter_rank = (select rank from r)
    and w.iteration = $2
    and ($4::jsonb is null or (w.urgent, w.iter_rank, w.focus, w.created_at, w.ord) > (
      ($4::jsonb ->> 0)::smallint, ($4::jsonb ->> 1)::integer, ($4::jsonb ->> 2)::smallint,
      ($4::jsonb ->> 3)::timestamptz, ($4::jsonb ->> 4)::bigint))
    and not exists (
      select 1 from claims c where c.project_id = w.project_id and c.node_id = w.node_id and c.expires_at > $3
    )
  order by w.focus, w.created_at, w.ord
  limit $5
) x
order by x.urgent, x.focus, x.created_at, x.ord
limit $5
