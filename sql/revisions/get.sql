-- $1 project_id text: the project's revision (one primary-key lookup), or no row before its first change
select revision::text as revision
from project_revisions
where project_id = $1
