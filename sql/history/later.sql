-- $1 project_id text, $2 target_ids text[], $3 after_id bigint: every change of those targets
-- newer than $3, oldest first (what a revert's conflict check compares against)
-- Each target's changes are a lateral probe of changes_target, `id > $3` checked outside it (offset
-- 0 keeps it there; sql/nodes/get-many.sql says why): as `target_id = any($2) and id > $3`, and
-- with `id > $3` in the probe, the generic plan read the project's changes after $3 through the
-- primary key and filtered on the targets.
select c.id, c.user_id, c.action, c.target_kind, c.target_id, c.before, c.after, c.fields
from (select distinct $1::text as project_id, unnest((select $2::text[])) as target_id) as k
cross join lateral (
  select r.id, r.user_id, r.action, r.target_kind, r.target_id, r.before, r.after, r.fields
  from changes r
  where r.project_id = k.project_id and r.target_id = k.target_id
  offset 0
) c
where c.id > $3
order by c.id
