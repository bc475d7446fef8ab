-- $1 project_id text, $2 id text, $3 data jsonb
-- rev and field_revs as sql/nodes/update.sql sets them (migration 0040)
update nodes set data = $3::jsonb, classified_at = now(), updated_at = now(),
  rev = case when data is distinct from $3::jsonb then nextval('target_revs') else rev end,
  field_revs = field_revs || coalesce((
    select jsonb_object_agg(k, currval('target_revs'))
    from jsonb_object_keys(data || $3::jsonb) k
    where (data -> k) is distinct from ($3::jsonb -> k)), '{}')
where project_id = $1 and id = $2
returning id, type, parent_id, data, created_at, rev
