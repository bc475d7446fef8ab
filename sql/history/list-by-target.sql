-- $1 project_id text, $2 target_id text (a node id), $3 user_id text|null, $4 agent text|null,
-- $5 via text|null, $6 request_id text|null, $7 since timestamptz|null, $8 until timestamptz|null,
-- $9 below_id bigint|null, $10 snapshot text|null, $11 limit int: one node's changes, newest first,
-- on the (project_id, target_id, id) index (a file of its own: a nullable target in list.sql
-- would leave a generic plan scanning the whole project). Cursor as in list.sql.
select id, at, user_id, user_name, key_id, agent, via, request_id, action, target_kind, target_id,
  target_type, before, after, fields, revert_of, pg_current_snapshot()::text as snapshot
from changes
where project_id = $1
  and target_id = $2
  and target_kind = 'node'
  and ($3::text is null or user_id = $3)
  and ($4::text is null or agent = $4)
  and ($5::text is null or via = $5)
  and ($6::text is null or request_id = $6)
  and ($7::timestamptz is null or at >= $7)
  and ($8::timestamptz is null or at <= $8)
  and ($9::bigint is null or id < $9)
  and ($10::text is null or pg_visible_in_snapshot(txid, $10::pg_snapshot))
order by id desc
limit $11
