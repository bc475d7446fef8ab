-- $1 project_id text, $2 seq bigint, $3 horizon timestamptz, $4 skip bigint[], $5 xmin xid8
-- (as text): node events after seq $2, plus older-seq ones of transactions that were still
-- running at the last read (txid >= its xmin $5: a transaction that took its seq earlier but
-- committed later) and started at or after its horizon $3, minus those already applied; in seq
-- order, with their txid (as text). Two disjoint branches so each uses its index
-- (events_project_seq, events_created).
select seq, txid, payload from (
  select seq, txid::text as txid, payload
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and project_id = $1 and seq > $2
  union all
  select seq, txid::text as txid, payload
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and created_at >= $3::timestamptz and project_id = $1 and seq <= $2
    and txid >= $5::xid8
) e
where not (seq = any($4::bigint[]))
order by seq
limit 2000
