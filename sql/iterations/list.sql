-- $1 project_id text, $2 status text|null: in display order
select name, status, system, sort_order, git_tags, completed_at, rev, field_revs
from iterations
where project_id = $1 and ($2::text is null or status = $2)
order by sort_order, created_at, name
