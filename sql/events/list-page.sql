-- $1 project_id text, $2 after_txid xid8|null, $3 after_seq bigint|null, $4 limit int: the
-- project's events after the cursor, in (txid, seq) order, and only those of transactions older
-- than every transaction still running. A transaction still open may yet commit events with a
-- smaller seq; past that horizon nothing new can appear, so a cursor never skips an event.
-- Ordered by events.txid, the xid8 (a bare `txid` names the text column below: '999' > '1000').
select seq, txid::text as txid, payload
from events
where project_id = $1
  -- one range of the (project_id, txid, seq) index from the cursor; no cursor: from the start
  -- (an "or" here made every page read the project's events from its first)
  and (txid, seq) > (coalesce($2::xid8, '0'::xid8), coalesce($3::bigint, 0))
  and txid < pg_snapshot_xmin(pg_current_snapshot())
order by events.txid, seq
limit $4
