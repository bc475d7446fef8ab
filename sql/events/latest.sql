-- $1 project_id text: the (txid, seq) of the project's newest event the feed can show already
-- (the same horizon as list-page.sql), or no row while it has none. Ordered by events.txid, the
-- xid8: a bare `txid` here names the text column of the select list, and '999' > '1000'
select seq, txid::text as txid
from events
where project_id = $1 and txid < pg_snapshot_xmin(pg_current_snapshot())
order by events.txid desc, seq desc
limit 1
