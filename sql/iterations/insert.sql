-- $1 project_id text, $2 name text, $3 status text, $4 git_tags jsonb: appended after the others
insert into iterations (project_id, name, status, sort_order, git_tags, completed_at)
select $1, $2, $3, coalesce(max(sort_order) + 1, 0), $4::jsonb, case when $3 = 'done' then now() end
from iterations
where project_id = $1
on conflict (project_id, name) do nothing
returning name, status, system, sort_order, git_tags, completed_at, rev, field_revs
