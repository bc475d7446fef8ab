-- A job's add beside open siblings (work_jobs_added, 0033) still read the project's iterations
-- for every job it wrote (work_iter_ranks as a jsonb object, a lateral rerun per row), and probed
-- three indexes of work_items per inserted id (issue 51, 3). Now:
-- 1. The rank of the job's iteration is the open sibling's when the sibling sits in the same
--    iteration: a rank is a function of the project and the iteration's name (work_iter_ranks), and
--    the sibling's work item holds it as the work state stands at every statement (a rerank
--    rewrites every item of a moved iteration). A job in another iteration than its sibling reads
--    its one rank from work_iter_ranks, as work_refresh maps it.
-- 2. Only the probe of a work item of the inserted id itself stays: work_items.approach_id and
--    goal_id name an approach and a goal, never a job (no type's parent is a job), so the probes
--    of work_items_approach and work_items_goal by a job's id never found one.
-- Everything else of 0033's function (its settings, the lock, the sibling, the row, its answer)
-- is as it was; work_nodes_inserted and work_refresh are unchanged.
--
-- A job's insert beside 700 jobs, its triggers included (bun bench/job-insert-variants.ts, the
-- two functions taking turns, 10 rounds of 100): PGlite CPU 0.211 -> 0.176 ms, a goal's 0.051.

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
  -- a work item of an inserted id (none, but in a restore); none can be under a job (no type's
  -- parent is a job), so 0033's probes of work_items_approach and work_items_goal are gone
  if exists (
    select 1 from unnest(ids) x(id)
    where exists (select 1 from work_items w where w.project_id = p and w.node_id = x.id offset 0)
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
    -- the rank of the job's iteration: the sibling's when it sits in the same one (a rank is the
    -- project's and the iteration's alone), else as work_refresh maps them (the name's, or the
    -- null name's for a name that is no iteration)
    case when s.iteration is not distinct from n.iteration then s.iter_rank
      else (select r.rank from work_iter_ranks(p) r where r.name = n.iteration or r.name is null order by r.name is null limit 1) end,
    s.focus, n.created_at, n.ord, txid_current(), false
  from unnest(ids) x(id)
  cross join lateral (
    select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord,
      case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
    from nodes n where n.project_id = p and n.id = x.id offset 0
  ) n
  cross join lateral (
    select w.approach_id, w.goal_id, w.blocked, w.focus, w.iteration, w.iter_rank from work_items w
    where w.project_id = p and w.approach_id = n.parent_id and w.type = 'job' and w.open and not (w.node_id = any(ids))
    limit 1
  ) s;
  get diagnostics made = row_count;
  -- a job without an open sibling (its approach may turn clear or unclear as a blocker), or at
  -- the root: the whole recompute
  return made = cardinality(ids);
end
$$;
