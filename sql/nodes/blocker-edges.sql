-- $1 project_id text
-- Every approach of the project that names blockers, with its blockedBy ids: the graph the
-- cycle check of blockedBy walks (src/nodes/write.ts).
select id, data->'blockedBy' as blocked_by
from nodes
where project_id = $1 and type = 'approach' and jsonb_typeof(data->'blockedBy') = 'array'
