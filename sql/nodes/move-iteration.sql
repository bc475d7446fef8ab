-- $1 project_id text, $2 from_name text, $3 to_name text: every job and task naming the iteration
update nodes
set data = jsonb_set(data, '{iteration}', to_jsonb($3::text)), updated_at = now()
where project_id = $1 and type in ('job', 'task') and data ->> 'iteration' = $2
returning id, type, parent_id, data, rev
