-- $1 project_id text, $2 seq bigint, $3 horizon timestamptz, $4 skip bigint[]: node events after
-- seq $2, plus older-seq ones started at or after the horizon of the last read (a transaction
-- that took its seq earlier but committed later), minus those already applied; in seq order.
-- Two disjoint branches so each uses its index (events_project_seq, events_created).
select seq, payload, created_at from (
  select seq, payload, created_at
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and project_id = $1 and seq > $2
  union all
  select seq, payload, created_at
  from events
  where type in ('node.added', 'node.updated', 'node.deleted') and created_at >= $3::timestamptz and project_id = $1 and seq <= $2
) e
where not (seq = any($4::bigint[]))
order by seq
limit 2000
