-- A job's add ran the whole of work_after_change (issue 51, 3: a job's insert cost about 5x a
-- goal's in CPU): the inserted rows built into a jsonb array with their data and read back from it
-- four times, five settings set and restored around the call, the changed, related and moved ids,
-- the approaches that may have changed as blockers, and the work items under the changed ids, in
-- about eight statements before work_refresh. For an insert of jobs only, whose approaches each
-- keep an open job besides them, all of that comes to one answer: those approaches were not clear
-- before (an open job) and are not after (the same job), so no job they block moves; the jobs'
-- own items, and the work items under the inserted ids (none but in a restore of a subtree), are
-- what work_after_change hands work_refresh, and each of those rows can be written from an open
-- sibling's (work_jobs_added, below). Any other insert (an approach, a task of kind do-it, a job
-- whose approach had no other open job, several projects, the work state deferred by a batch or
-- a revert) goes through work_changed as in 0027. work_refresh and work_after_change are unchanged.
--
-- A job's insert beside 3,000 jobs, its triggers included (bun bench/write-triggers-job.ts, the
-- functions of 0030 and of 0033 taking turns): PGlite CPU 0.47 -> 0.25 ms, PostgreSQL (timed in
-- the backend) 0.21 -> 0.10 ms; a goal's insert 0.06 and 0.02 ms. The first job of an approach
-- (no open sibling) pays for the attempt before the whole recompute: 0.22 -> 0.30 ms on PostgreSQL.

-- The work items of jobs `ids` just inserted into project p, written as
-- work_after_change would write them; false, when the insert needs the whole recompute: the caller
-- runs it then (over the rows written here too, which work_refresh rewrites).
--
-- What work_refresh computes for a job beyond its own fields (its approach, its goal, blocked,
-- focus) reads only the approach, its ancestors and its blockers, never the job (the rule of
-- 0016): it is the same for every job of one approach, and each sibling's work item holds it. And
-- an approach that keeps an open job besides the inserted ones was not clear before and is not
-- after, so no job it blocks moves (the question work_after_change asks of each changed job's
-- approach, 0018). One open sibling's work item answers both: when each job has one (the work
-- state is kept at every statement, and this insert is not deferred), and no inserted id has a
-- work item yet or any under it (none has, but in a restore), each job's row is its own fields
-- beside that sibling's. A plain insert, so only the insert's count trigger fires (an insert with
-- `on conflict`, work_refresh's, fires the update's too). The settings are work_after_change's (0030).
create or replace function work_jobs_added(p text, ids text[]) returns boolean
language plpgsql volatile
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
set plan_cache_mode = force_generic_plan
as $$
declare
  made integer;
begin
  -- one writer of a project's work state at a time (sql/work/lock-project.sql, as in 0016)
  perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
  -- the work items of the inserted ids and those under them (0030's probes of work_items_approach
  -- and work_items_goal by the changed ids)
  if exists (
    select 1 from unnest(ids) x(id)
    where exists (select 1 from work_items w where w.project_id = p and w.node_id = x.id offset 0)
      or exists (select 1 from work_items w where w.project_id = p and w.approach_id = x.id offset 0)
      or exists (select 1 from work_items w where w.project_id = p and w.goal_id = x.id offset 0)
  ) then
    return false;
  end if;
  -- each job's own fields as work_refresh (0030) computes them, the rest from an open sibling's row
  insert into work_items (project_id, node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank,
    focus, created_at, ord, touched_tx, blocked_before)
  select p, n.id, n.type, s.approach_id, s.goal_id,
    (n.data ->> 'status') is distinct from 'done',
    s.blocked,
    1,
    n.iteration,
    coalesce((m.rank_of ->> n.iteration)::integer, (m.rank_of ->> '')::integer),
    s.focus, n.created_at, n.ord, txid_current(), false
  from unnest(ids) x(id)
  cross join lateral (
    select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord,
      case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
    from nodes n where n.project_id = p and n.id = x.id offset 0
  ) n
  cross join lateral (
    select w.approach_id, w.goal_id, w.blocked, w.focus from work_items w
    where w.project_id = p and w.approach_id = n.parent_id and w.type = 'job' and w.open and not (w.node_id = any(ids))
    limit 1
  ) s
  -- the iterations' ranks as work_refresh maps them, read for a job that found its sibling (a job
  -- without one costs no more than the probe above before the whole recompute)
  cross join lateral (
    select coalesce(jsonb_object_agg(coalesce(r.name, ''), r.rank), '{}'::jsonb) as rank_of
    from work_iter_ranks(p) r where s.approach_id is not null
  ) m;
  get diagnostics made = row_count;
  -- a job without an open sibling (its approach may turn clear or unclear as a blocker), or at
  -- the root: the whole recompute
  return made = cardinality(ids);
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
begin
  select bool_and(n.type = 'job'), min(n.project_id), max(n.project_id), array_agg(n.id)
  into jobs_only, p, last_p, ids
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  if ids is null then
    return null;
  end if;
  if jobs_only and p = last_p and current_setting('arbor.work_defer', true) is distinct from 'on'
    and work_jobs_added(p, ids) then
    return null;
  end if;
  select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id, 'data', n.data))
  into changed
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  perform work_changed(changed); -- deferred to the end of a batch or revert (0023)
  return null;
end
$$;
