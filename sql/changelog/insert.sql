-- $1 project_id text, $2 node_id text, $3 node jsonb: the deleted node in full
insert into changelog (project_id, node_id, node) values ($1, $2, $3::jsonb)
returning id
