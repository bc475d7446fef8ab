-- $1 seq bigint, $2 horizon timestamptz, $3 skip bigint[]: node events of every project after
-- seq $1, plus older-seq ones started at or after the horizon of the last read, minus those
-- already applied; in seq order. Two disjoint branches so each uses its index.
select seq, project_id, payload, created_at from (
  select seq, project_id, payload, created_at
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and seq > $1
  union all
  select seq, project_id, payload, created_at
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and created_at >= $2::timestamptz and seq <= $1
) e
where not (seq = any($3::bigint[]))
order by seq
limit 1000
