-- A job's add ran the whole of work_after_change (issue 51, 3: a job's insert cost about 5x a
-- goal's in CPU): the inserted rows built into a jsonb array with their data and read back from it
-- four times, five settings set and restored around the call, the changed, related and moved ids,
-- the approaches that may have changed as blockers, and the work items under the changed ids, in
-- about eight statements before work_refresh. For an insert of jobs only, whose approaches each
-- keep an open job besides them, all of that comes to one answer: those approaches were not clear
-- before (an open job) and are not after (the same job), so no job they block moves; the jobs'
-- own items, and the work items under the inserted ids (none but in a restore of a subtree), are
-- what work_after_change hands work_refresh. work_jobs_added asks the one question and hands
-- work_refresh the same ids; any other insert (an approach, a task of kind do-it, a job whose
-- approach had no other open job, several projects, the work state deferred by a batch or a
-- revert) goes through work_changed as in 0027. work_refresh and work_after_change are unchanged.

-- The work items of jobs just inserted into project p under `parents`, recomputed as
-- work_after_change would; false, and nothing recomputed, when an approach among `parents` keeps no
-- open job outside `ids` (it may have turned clear or unclear as a blocker: the caller runs the
-- whole recompute then). The settings are work_after_change's (0030), so work_refresh runs with
-- the same plans.
create or replace function work_jobs_added(p text, ids text[], parents text[]) returns boolean
language plpgsql volatile
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
set plan_cache_mode = force_generic_plan
as $$
begin
  -- one writer of a project's work state at a time (sql/work/lock-project.sql, as in 0016)
  perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
  -- a parent without another open job (or none: a job at the root) may change as a blocker
  if exists (
    select 1 from unnest(parents) a(id)
    where not exists (
      select 1 from nodes j
      where j.project_id = p and j.parent_id = a.id and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
        and not (j.id = any(ids))
      offset 0
    )
  ) then
    return false;
  end if;
  -- the jobs themselves and the work items under them (0030's probes of work_items_approach and
  -- work_items_goal by the changed ids)
  perform work_refresh(p, array(select distinct x.id from (
    select unnest(ids) as id
    union all
    select w.node_id from unnest(ids) x(id)
    cross join lateral (select w.node_id from work_items w where w.project_id = p and w.approach_id = x.id offset 0) w
    union all
    select w.node_id from unnest(ids) x(id)
    cross join lateral (select w.node_id from work_items w where w.project_id = p and w.goal_id = x.id offset 0) w
  ) x));
  return true;
end
$$;

-- 0027's insert trigger, with the jobs-only insert first: one pass over the inserted rows finds
-- whether every row the work state reads is a job of one project, and builds the jsonb of
-- work_changed only when it is not (or when work_jobs_added hands the insert back).
create or replace function work_nodes_inserted() returns trigger
language plpgsql as $$
declare
  changed jsonb;
  jobs_only boolean;
  p text;
  last_p text;
  ids text[];
  parents text[];
begin
  select bool_and(n.type = 'job'), min(n.project_id), max(n.project_id), array_agg(n.id), array_agg(distinct n.parent_id)
  into jobs_only, p, last_p, ids, parents
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  if ids is null then
    return null;
  end if;
  if jobs_only and p = last_p and current_setting('arbor.work_defer', true) is distinct from 'on'
    and work_jobs_added(p, ids, parents) then
    return null;
  end if;
  select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id, 'data', n.data))
  into changed
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  perform work_changed(changed); -- deferred to the end of a batch or revert (0023)
  return null;
end
$$;
