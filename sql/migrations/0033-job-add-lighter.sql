-- A job's add ran the whole of work_after_change (issue 51, 3: a job's insert cost about 5x a
-- goal's in CPU): the inserted rows built into a jsonb array with their data and read back from it
-- four times, five settings set and restored around the call, the changed, related and moved ids,
-- the approaches that may have changed as blockers, and the work items under the changed ids, in
-- about eight statements before work_refresh. For an insert of jobs only, whose approaches each
-- keep an open job besides them, all of that comes to one answer: those approaches were not clear
-- before (an open job) and are not after (the same job), so no job they block moves; the jobs'
-- own items, and the work items under the inserted ids (none but in a restore of a subtree), are
-- what work_after_change hands work_refresh. work_jobs_added asks the one question, then writes
-- each job's row from a sibling's (below) or hands work_refresh the same ids; any other insert (an
-- approach, a task of kind do-it, a job whose approach had no other open job, several projects,
-- the work state deferred by a batch or a revert) goes through work_changed as in 0027.
-- work_refresh and work_after_change are unchanged.
--
-- A job's insert beside 3,000 jobs, its triggers included (bun bench/write-triggers-job.ts, the
-- functions of 0030 and of 0033 taking turns): PGlite CPU 0.52 -> 0.33 ms, PostgreSQL (timed in
-- the backend) 0.23 -> 0.12 ms; a goal's insert 0.07 and 0.02 ms.

-- The work items of jobs just inserted into project p under `parents`, recomputed as
-- work_after_change would; false, and nothing recomputed, when an approach among `parents` keeps no
-- open job outside `ids` (it may have turned clear or unclear as a blocker: the caller runs the
-- whole recompute then). The settings are work_after_change's (0030), so work_refresh runs with
-- the same plans.
--
-- Most such inserts are one job added beside others, and there work_refresh's recursive insert
-- (the walk to the goal, the blockers and whether each is clear, the iterations' ranks, as maps),
-- with the two count triggers an insert with `on conflict` fires, was most of the cost. Yet what
-- it computes for a job beyond the job's own fields (its approach, its goal, blocked, focus) is
-- the same for every job of one approach, and a sibling's work item holds it: the rule of 0016
-- reads only the approach, its ancestors and its blockers for these, never the job. So when no
-- inserted id has a work item yet and none is under them, each job's row is its own fields beside
-- those of a sibling's row (the open job the question above found has one: the work state is
-- kept at every statement, and this insert is not deferred). A plain insert: only the insert's
-- count trigger fires. Anything else (an id with a row, rows under an id, a job whose sibling row
-- is missing) goes to work_refresh.
create or replace function work_jobs_added(p text, ids text[], parents text[]) returns boolean
language plpgsql volatile
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
set plan_cache_mode = force_generic_plan
as $$
declare
  made integer;
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
  -- the work items under the inserted ids (0030's probes of work_items_approach and
  -- work_items_goal by the changed ids), and their own: none, but in a restore of a subtree
  if not exists (
    select 1 from unnest(ids) x(id)
    where exists (select 1 from work_items w where w.project_id = p and w.node_id = x.id offset 0)
      or exists (select 1 from work_items w where w.project_id = p and w.approach_id = x.id offset 0)
      or exists (select 1 from work_items w where w.project_id = p and w.goal_id = x.id offset 0)
  ) then
    -- each job's own fields as work_refresh (0030) computes them, the rest from a sibling's row
    insert into work_items (project_id, node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank,
      focus, created_at, ord, touched_tx, blocked_before)
    select p, n.id, n.type, s.approach_id, s.goal_id,
      (n.data ->> 'status') is distinct from 'done',
      s.blocked,
      1,
      n.iteration,
      coalesce((m.rank_of ->> n.iteration)::integer, (m.rank_of ->> '')::integer),
      s.focus, n.created_at, n.ord, txid_current(), false
    from (select coalesce((select jsonb_object_agg(coalesce(name, ''), rank) from work_iter_ranks(p)), '{}'::jsonb) as rank_of) m
    cross join unnest(ids) x(id)
    cross join lateral (
      select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord,
        case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
      from nodes n where n.project_id = p and n.id = x.id offset 0
    ) n
    cross join lateral (
      select w.approach_id, w.goal_id, w.blocked, w.focus from work_items w
      where w.project_id = p and w.approach_id = n.parent_id and w.type = 'job' and not (w.node_id = any(ids))
      limit 1
    ) s;
    get diagnostics made = row_count;
    if made = cardinality(ids) then
      return true;
    end if;
  end if;
  -- the jobs themselves and the work items under them, as work_after_change hands them on
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
