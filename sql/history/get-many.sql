-- $1 project_id text, $2 ids bigint[]: those of the project's changes, newest first
-- Each id is a lateral probe of the primary key (sql/nodes/get-many.sql says why): as
-- `id = any($2)` the generic plan read the project's changes and filtered on the ids.
select c.id, c.at, c.user_id, c.user_name, c.key_id, c.agent, c.via, c.request_id, c.action, c.target_kind,
  c.target_id, c.target_type, c.before, c.after, c.fields, c.revert_of, c.proposal
from (select distinct $1::text as project_id, unnest((select $2::bigint[])) as id) as k
cross join lateral (
  select r.id, r.at, r.user_id, r.user_name, r.key_id, r.agent, r.via, r.request_id, r.action, r.target_kind,
    r.target_id, r.target_type, r.before, r.after, r.fields, r.revert_of, r.proposal
  from changes r
  where r.project_id = k.project_id and r.id = k.id
  offset 0
) c
order by c.id desc
