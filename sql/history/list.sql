-- $1 project_id text, $2 user_id text|null, $3 agent text|null, $4 via text|null, $5 request_id text|null,
-- $6 since timestamptz|null, $7 until timestamptz|null, $8 below_id bigint|null, $9 snapshot text|null,
-- $10 limit int: newest first. A cursor carries the snapshot its first page saw ($9): later pages
-- keep to the changes that snapshot saw, so a change committed meanwhile by a transaction that
-- took a smaller id is neither slipped in between pages nor skipped (it is newer than the read).
-- Read backwards along the key (project_id, id) and stopped after $10 rows, in either plan a
-- prepared statement may run (bench/history-hot.ts). The cursor is a bound of the key:
-- `id < coalesce($8, …)`, where `$8 is null or id < $8` was a filter of every row newer than it.
-- The filters that may be off are one `case`: written `$2 is null or user_id = $2`, … each
-- counted as keeping about 0.5% of the rows in a generic plan (made without the parameters'
-- values), so a project was expected to have one row left, and the plan read all of its changes
-- and sorted them for the page. One `case` counts as keeping half, and the walk that stops early
-- costs less; a custom plan folds it to the filters that are on (or to nothing).
select id, at, user_id, user_name, key_id, agent, via, request_id, action, target_kind, target_id,
  target_type, before, after, fields, revert_of, proposal, pg_current_snapshot()::text as snapshot
from changes
where project_id = $1
  and id < coalesce($8::bigint, 9223372036854775807)
  and case
    when $2::text is null and $3::text is null and $4::text is null and $5::text is null
      and $6::timestamptz is null and $7::timestamptz is null and $9::text is null then true
    else ($2 is null or user_id = $2) and ($3 is null or agent = $3) and ($4 is null or via = $4)
      and ($5 is null or request_id = $5) and ($6 is null or at >= $6) and ($7 is null or at <= $7)
      and ($9 is null or pg_visible_in_snapshot(txid, $9::pg_snapshot))
  end
order by id desc
limit $10
