-- $1 project_id text: the newest node event seq of the project (0: none), read before a
-- snapshot of its nodes so that nothing committed in between is lost
select coalesce(max(seq), 0) as seq
from events
where project_id = $1
