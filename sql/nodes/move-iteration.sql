-- $1 project_id text, $2 from_name text, $3 to_name text: every job and task naming the iteration
-- rev and field_revs as sql/nodes/update.sql sets them (migration 0040): only the iteration changes
update nodes
set data = jsonb_set(data, '{iteration}', to_jsonb($3::text)), updated_at = now(),
  rev = case when data -> 'iteration' is distinct from to_jsonb($3::text) then nextval('target_revs') else rev end,
  field_revs = case when data -> 'iteration' is distinct from to_jsonb($3::text) then field_revs || jsonb_build_object('iteration', currval('target_revs'))
    else field_revs end
where project_id = $1 and type in ('job', 'task') and data ->> 'iteration' = $2
returning id, type, parent_id, data, rev
