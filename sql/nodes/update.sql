-- $1 project_id text, $2 id text, $3 parent_id text|null, $4 data jsonb, $5 classified boolean,
-- $6 key text|null: the one key of data the caller expects to change (a hint, checked here)
-- classified: the kind was set by hand, so the background classifier leaves the task alone
-- rev and field_revs (live.md, 1; migration 0040): a new rev when data or the parent changed, and
-- it for each field changed. With the hint, and nothing but that key differing, the field revs are
-- one key's; otherwise every key of the old and new data is compared. field_revs reads the rev by
-- currval: an update's new values are computed in the order of the table's columns, rev first.
update nodes
set parent_id = $3, data = $4::jsonb, updated_at = now(),
  classified_at = case when $5 then coalesce(classified_at, now()) else classified_at end,
  rev = case when data is distinct from $4::jsonb or parent_id is distinct from $3 then nextval('target_revs') else rev end,
  field_revs = field_revs
    || case when parent_id is distinct from $3 then jsonb_build_object('parentId', currval('target_revs')) else '{}' end
    || case
      when $6::text is not null and (data - $6::text) = ($4::jsonb - $6::text) then
        case when (data -> $6::text) is distinct from ($4::jsonb -> $6::text)
          then jsonb_build_object($6::text, currval('target_revs')) else '{}' end
      else coalesce((
        select jsonb_object_agg(k, currval('target_revs'))
        from jsonb_object_keys(data || $4::jsonb) k
        where (data -> k) is distinct from ($4::jsonb -> k)), '{}')
    end
where project_id = $1 and id = $2
returning id, type, parent_id, data, created_at, rev
