-- $1 project_id text, $2 id text, $3 data jsonb
update nodes set data = $3::jsonb, classified_at = now(), updated_at = now()
where project_id = $1 and id = $2
returning id, type, parent_id, data, created_at, rev
