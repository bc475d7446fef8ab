-- $1 project_id text, $2 id bigint
select id, node_id, action, node, deleted_at, restored_at from changelog where project_id = $1 and id = $2
