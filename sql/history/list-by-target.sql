-- $1 project_id text, $2 target_id text (a node id), $3 user_id text|null, $4 agent text|null,
-- $5 via text|null, $6 request_id text|null, $7 since timestamptz|null, $8 until timestamptz|null,
-- $9 below_id bigint|null, $10 snapshot text|null, $11 limit int: one node's changes, newest first,
-- on the (project_id, target_id, id) index (a file of its own: a nullable target in list.sql
-- would leave a generic plan scanning the whole project). Cursor and filters as in list.sql,
-- for the same reasons: the cursor a bound of the index (as a filter, a page deep in a busy
-- node's history read every change of the node newer than it), the filters one `case`.
select id, at, user_id, user_name, key_id, agent, via, request_id, action, target_kind, target_id,
  target_type, before, after, fields, revert_of, pg_current_snapshot()::text as snapshot
from changes
where project_id = $1
  and target_id = $2
  and id < coalesce($9::bigint, 9223372036854775807)
  and target_kind = 'node'
  and case
    when $3::text is null and $4::text is null and $5::text is null and $6::text is null
      and $7::timestamptz is null and $8::timestamptz is null and $10::text is null then true
    else ($3 is null or user_id = $3) and ($4 is null or agent = $4) and ($5 is null or via = $5)
      and ($6 is null or request_id = $6) and ($7 is null or at >= $7) and ($8 is null or at <= $8)
      and ($10 is null or pg_visible_in_snapshot(txid, $10::pg_snapshot))
  end
order by id desc
limit $11
