-- $1 project_id text, $2 user_id text|null, $3 agent text|null, $4 via text|null, $5 request_id text|null,
-- $6 since timestamptz|null, $7 until timestamptz|null, $8 below_id bigint|null, $9 snapshot text|null,
-- $10 limit int: newest first. A cursor carries the snapshot its first page saw ($9): later pages
-- keep to the changes that snapshot saw, so a change committed meanwhile by a transaction that
-- took a smaller id is neither slipped in between pages nor skipped (it is newer than the read).
select id, at, user_id, user_name, key_id, agent, via, request_id, action, target_kind, target_id,
  target_type, before, after, fields, revert_of, proposal, pg_current_snapshot()::text as snapshot
from changes
where project_id = $1
  and ($2::text is null or user_id = $2)
  and ($3::text is null or agent = $3)
  and ($4::text is null or via = $4)
  and ($5::text is null or request_id = $5)
  and ($6::timestamptz is null or at >= $6)
  and ($7::timestamptz is null or at <= $7)
  and ($8::bigint is null or id < $8)
  and ($9::text is null or pg_visible_in_snapshot(txid, $9::pg_snapshot))
order by id desc
limit $10
