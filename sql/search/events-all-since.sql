-- $1 seq bigint, $2 horizon timestamptz, $3 skip bigint[], $4 xmin xid8 (as text): node events
-- of every project after seq $1, plus older-seq ones of transactions still running at the last
-- read (txid >= its xmin $4) that started at or after its horizon $2, minus those already
-- applied; in seq order, with their txid (as text). Two disjoint branches so each uses its index.
select seq, txid, project_id, payload from (
  select seq, txid::text as txid, project_id, payload
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and seq > $1
  union all
  select seq, txid::text as txid, project_id, payload
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and created_at >= $2::timestamptz and seq <= $1
    and txid >= $4::xid8
) e
where not (seq = any($3::bigint[]))
order by seq
limit 1000
