-- $1 project_id text, $2 target_ids text[], $3 after_id bigint: every change of those targets
-- newer than $3, oldest first (what a revert's conflict check compares against)
-- Each target's changes after $3 are a lateral probe of changes_target (project_id, target_id,
-- id desc): the scan starts at the target's newest change and stops at $3, so a target with a long
-- history costs only its later changes. The redundant `target_id >= …` (the same rows) is a
-- condition changes_pkey (project_id, id) cannot use, there for the tie 6d73a2b met: where both
-- keys look like one row to a generic plan (a project no analyze has seen, or beside many small
-- ones), the key read the project's changes after $3 and filtered on the target at the same
-- estimated cost, and a condition of changes_target only tips it. 6d73a2b wrote it as the row
-- comparison `(target_id, id) > (k.target_id, $3)`; on PostgreSQL 15 that comparison, on an
-- index whose id goes down, kept the scan from stopping at $3: it read every entry of the target
-- (180 pages for a node of 20,000 changes, 2.5 ms; now 4 pages, bench/history-hot.ts). The
-- project is a column of the ids' rows and `offset 0` keeps each probe whole
-- (sql/nodes/get-many.sql says why).
select c.id, c.user_id, c.action, c.target_kind, c.target_id, c.before, c.after, c.fields
from (select distinct $1::text as project_id, unnest((select $2::text[])) as target_id) as k
cross join lateral (
  select r.id, r.user_id, r.action, r.target_kind, r.target_id, r.before, r.after, r.fields
  from changes r
  where r.project_id = k.project_id and r.target_id = k.target_id and r.id > $3
    and r.target_id >= k.target_id
  offset 0
) c
order by c.id
