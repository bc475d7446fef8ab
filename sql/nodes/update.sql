-- $1 project_id text, $2 id text, $3 parent_id text|null, $4 data jsonb, $5 classified boolean
-- classified: the kind was set by hand, so the background classifier leaves the task alone
update nodes
set parent_id = $3, data = $4::jsonb, updated_at = now(),
  classified_at = case when $5 then coalesce(classified_at, now()) else classified_at end
where project_id = $1 and id = $2
returning id, type, parent_id, data, created_at, rev
