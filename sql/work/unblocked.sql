-- $1 project_id text, $2 now timestamptz: the work items this transaction made ready (blocked
-- before it, ready now: open, not blocked, not held by a claim live at $2), in GET /ready's order
select w.node_id
from work_items w
where w.project_id = $1 and w.blocked_before and w.touched_tx = txid_current() and w.open and not w.blocked
  and not exists (
    select 1 from claims c where c.project_id = w.project_id and c.node_id = w.node_id and c.expires_at > $2
  )
order by w.urgent, w.iter_rank, w.focus, w.created_at, w.ord
