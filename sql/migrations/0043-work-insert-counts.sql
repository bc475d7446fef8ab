-- A job's insert kept its work state in 0041's trigger (work_nodes_inserted) with one statement for
-- the work items and then a call of work_counts_add for their counts: a second plpgsql function,
-- the project's lock taken again, the counts built as an array of work_counts composites, unnested,
-- checked against projects and grouped again, then upserted (issue 51, 3; bench/writes.md, "Twelfth
-- pass: a job's work item"). The statement that inserts the work items now upserts their counts too,
-- grouped by iteration, from its own returning rows. What work_counts_add did beyond that upsert is
-- not needed here: the project's lock is taken above, before any work item is read (the lock order
-- of 0026 holds); the project exists (the inserted nodes' foreign key checked it and holds its row
-- for key share until the commit); and a group of open rows never sums to nothing (each row counts
-- one, ready or blocked).
--
-- And the rank of a job that does not sit in its sibling's iteration was a subquery over
-- work_iter_ranks in the statement: a statement starts every plan node it holds at each run, the
-- subquery's too (its scan of iterations opened and locked, a window and two sorts set up), when most
-- runs never ask it (a job lands in its sibling's iteration). It is now read from the map of
-- work_iter_rank_map (new, below) through uncorrelated subqueries: each run at most once in a
-- statement, the first time a job needs it (not at all in most), and set up as one Result node. (A helper called per job, the
-- first form tried, ran its query once per job: a batch of 100 jobs named into another iteration
-- than their siblings' cost 0.5 ms more of PostgreSQL's CPU than the subquery.) The map is
-- work_refresh's (0034): an iteration's rank under its name, that of a name no iteration has under ''.
-- The rows written are those of 0041 (test/work.job-add.test.ts compares them with work_refresh's;
-- test/work.state.test.ts the counts with the rule's).

-- The ranks of project p's iterations by name, and under '' the rank of a name no iteration has (or
-- of no iteration), as work_refresh maps them. plpgsql: its statement is planned once per connection.
create function work_iter_rank_map(p text) returns jsonb
language plpgsql stable as $$
begin
  return (select coalesce(jsonb_object_agg(coalesce(r.name, ''), r.rank), '{}'::jsonb) from work_iter_ranks(p) r);
end
$$;

-- 0041's trigger, its counts written by the work items' statement (the rest is 0041's).
create or replace function work_nodes_inserted() returns trigger
language plpgsql
-- as work_jobs_added ran (0033): every lookup by an index, each statement planned once per
-- connection; hash joins stay allowed (the one join here is of the inserted rows with their
-- parents' siblings, both in memory)
set enable_seqscan = off set enable_mergejoin = off
set plan_cache_mode = force_generic_plan
as $$
declare
  changed jsonb;
  jobs_only boolean;
  p text;
  last_p text;
  ids text[];
  made integer;
begin
  select bool_and(n.type = 'job'), min(n.project_id), max(n.project_id), array_agg(n.id)
  into jobs_only, p, last_p, ids
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  if ids is null then
    return null;
  end if;
  -- jobs only, of one project, the work state kept at once: each job's work item is its own fields
  -- beside an open sibling's (0033), when every job has one
  if jobs_only and p = last_p and current_setting('arbor.work_defer', true) is distinct from 'on' then
    -- one writer of a project's work state at a time (sql/work/lock-project.sql, as in 0016); the
    -- counts' rows below are written under it, as work_counts_add writes them (0026)
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
    begin
      with siblings as materialized (
        -- one open sibling of each parent (an approach), through nodes_parent: the first job under
        -- it that is not done and not inserted here, and its work item
        select par.parent_id, s.approach_id, s.goal_id, s.blocked, s.focus, s.iteration, s.iter_rank
        from (select distinct n.parent_id from new_nodes n where n.type = 'job') par
        cross join lateral (
          select w.approach_id, w.goal_id, w.blocked, w.focus, w.iteration, w.iter_rank
          from nodes j
          cross join lateral (select * from work_items w where w.project_id = p and w.node_id = j.id offset 0) w
          where j.project_id = p and j.parent_id = par.parent_id and j.type = 'job'
            and (j.data ->> 'status') is distinct from 'done' and not (j.id = any(ids)) and w.open
          limit 1
        ) s
      ),
      written as (
        insert into work_items (project_id, node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank,
          focus, created_at, ord, touched_tx, blocked_before)
        select p, n.id, n.type, s.approach_id, s.goal_id,
          (n.data ->> 'status') is distinct from 'done',
          s.blocked,
          1,
          it.iteration,
          -- the rank of the job's iteration: the sibling's when it sits in the same one, else as
          -- work_refresh maps them (0038)
          case when s.iteration is not distinct from it.iteration then s.iter_rank
            else coalesce(((select work_iter_rank_map(p)) ->> it.iteration)::integer, ((select work_iter_rank_map(p)) ->> '')::integer) end,
          s.focus, n.created_at, n.ord, txid_current(), false
        from new_nodes n
        join siblings s on s.parent_id = n.parent_id
        cross join lateral (
          select case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
        ) it
        where n.type = 'job'
        returning iteration, open, blocked
      ),
      -- their counts by iteration (the open ones: ready or claimed, blocked), added to the project's
      counted as (
        insert into work_counts as c (project_id, iteration, unblocked, blocked)
        select p, w.iteration, sum((not w.blocked)::integer), sum(w.blocked::integer)
        from written w where w.open group by w.iteration
        on conflict on constraint work_counts_key do update
          set unblocked = c.unblocked + excluded.unblocked, blocked = c.blocked + excluded.blocked
      )
      select count(*) from written into made;
      -- a job without an open sibling (its approach may turn clear or unclear as a blocker): the
      -- whole recompute below, over the rows written here too (work_refresh rewrites them)
      if made = cardinality(ids) then
        return null;
      end if;
    exception when unique_violation then
      -- a work item of an inserted id was there: none is, while the triggers keep the work state;
      -- the whole recompute puts it right (the block's insert is undone, its counts with it)
      null;
    end;
  end if;
  select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id))
  into changed
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  perform work_changed(changed); -- deferred to the end of a batch or revert (0023)
  return null;
end
$$;
