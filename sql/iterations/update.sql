-- $1 project_id text, $2 name text, $3 new_name text, $4 status text, $5 git_tags jsonb, $6 sort_order integer
-- completed_at follows status: set when it becomes done, cleared when active again
update iterations
set name = $3,
  completed_at = case when $4 = 'done' then coalesce(completed_at, now()) else null end,
  status = $4,
  git_tags = $5::jsonb,
  sort_order = $6
where project_id = $1 and name = $2
returning name, status, system, sort_order, git_tags, completed_at, rev, field_revs
