-- $1 project_id text, $2 target_ids text[], $3 limit integer: the newest changes of these targets,
-- newest first (a stale write names the latest change of each field it conflicts on, live.md 1)
-- Each target's newest $3 by a lateral probe of changes_target, then the newest $3 of those
-- (sql/nodes/get-many.sql says why): as `target_id = any($2)` the generic plan read the project's
-- changes newest first and filtered on the targets until it had $3.
select c.id, c.at, c.user_id, c.user_name, c.key_id, c.agent, c.via, c.target_kind, c.target_id, c.fields
from (select distinct $1::text as project_id, unnest((select $2::text[])) as target_id) as k
cross join lateral (
  select r.id, r.at, r.user_id, r.user_name, r.key_id, r.agent, r.via, r.target_kind, r.target_id, r.fields
  from changes r
  where r.project_id = k.project_id and r.target_id = k.target_id
  order by r.id desc
  limit $3
) c
order by c.id desc
limit $3
