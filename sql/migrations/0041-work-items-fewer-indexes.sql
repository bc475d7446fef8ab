-- A work item cost five index entries (issue 51, 3: a batch of 100 jobs wrote 500 of them beside
-- its 100 rows), and three of those indexes served no read that another index could not:
--
-- 1. work_items_approach (project_id, approach_id) found the jobs of an approach. nodes_parent
--    (0002) finds them as well: a job's approach is its parent (api.md: a job's parent is an
--    approach), and work_refresh writes a job's approach_id from that parent. work_after_change
--    now reads an approach's jobs there, and a job added beside open siblings finds one through it.
-- 2. work_items_goal (project_id, goal_id) found the jobs whose nearest goal changed (its
--    goalStatus). A goal's jobs are found by walking down from it through nodes_parent (goal, need,
--    approach, job), not past another goal; a goal's status is seldom written, a job often.
-- 3. work_items_ready_iteration (project_id, iteration) where open and not blocked was never read:
--    GET /ready with an iteration (sql/work/ready-page.sql) compares `$2 is null or iteration = $2`,
--    which no index serves in the statement's generic plan (what a prepared statement runs after
--    its fifth call), and even the custom plans of a project of 50,000 nodes chose work_items_ready
--    and filtered it: 19,600 rows read for 20 of a small iteration, 21-47 ms on PostgreSQL.
--    sql/work/ready-page-iteration.sql now reads work_items_ready at the iteration's rank (every
--    open item of an iteration holds its rank, work_iter_ranks), the urgent and the other items each
--    in one range of it.
--
-- A job's work item now writes two index entries: its key and work_items_ready (a blocked one
-- work_items_blocked instead). The columns stay as they are (approach_id is GET /ready's spread
-- key; goal_id is written as before, and read by no index).
--
-- And the jobs-only insert of 0033/0038 (work_jobs_added) read each inserted job back from nodes
-- by its key, found an open sibling once per job (100 times the same for a batch of 100 under one
-- approach), and probed work_items' key once per job for a work item that cannot be there (the
-- nodes' delete trigger removes a node's work item with it, at once, even in a deferred write).
-- work_nodes_inserted now writes those rows itself from its transition table, reads one open
-- sibling per parent, and lets work_items' key find a work item that is there after all (the whole
-- recompute then runs, as it did when the probe found one). Each row is the one work_jobs_added
-- wrote (test/work.job-add.test.ts compares them with work_refresh's).
--
-- And the counts of 0026: a statement trigger with a transition table on work_items' inserts
-- (work_counts_insert) made PostgreSQL keep a copy of every row inserted, then built an array of
-- 100 composites from them and grouped it (0.7 ms of a batch's 4.7 ms nodes' statement on PGlite,
-- about a sixth; its function alone 0.3-0.4). The two statements that insert work items add
-- their counts themselves, grouped by iteration, through work_counts_add as the trigger did:
-- work_nodes_inserted's insert above, and work_refresh's upsert (for the rows it inserted; those it
-- updated are still counted by work_counts_update). The trigger and its function are dropped.

drop index work_items_approach;
drop index work_items_goal;
drop index work_items_ready_iteration;

-- 0034's trigger with 0038's work_jobs_added written into it, over its transition table.
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
  delta work_counts[];
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
    -- one writer of a project's work state at a time (sql/work/lock-project.sql, as in 0016)
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
            else (select r.rank from work_iter_ranks(p) r where r.name = it.iteration or r.name is null order by r.name is null limit 1) end,
          s.focus, n.created_at, n.ord, txid_current(), false
        from new_nodes n
        join siblings s on s.parent_id = n.parent_id
        cross join lateral (
          select case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
        ) it
        where n.type = 'job'
        returning iteration, open, blocked
      )
      -- the rows written, and their counts by iteration (the open ones: ready or claimed, blocked)
      select (select count(*) from written), array(
        select row(p, c.iteration, sum((not c.blocked)::integer)::integer, sum(c.blocked::integer)::integer)::work_counts
        from written c where c.open group by c.iteration)
      into made, delta;
      perform work_counts_add(delta);
      -- a job without an open sibling (its approach may turn clear or unclear as a blocker): the
      -- whole recompute below, over the rows written here too (work_refresh rewrites them)
      if made = cardinality(ids) then
        return null;
      end if;
    exception when unique_violation then
      -- a work item of an inserted id was there: none is, while the triggers keep the work state;
      -- the whole recompute puts it right (the block's insert is undone)
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

drop function work_jobs_added(text, text[]);

-- 0034's recompute, its upsert adding the counts of the rows it inserted (the rest is 0034's).
create or replace function work_refresh(p text, ids text[]) returns void
language plpgsql volatile
-- index lookups by id, whatever the statistics say: a table filled a moment ago has none, and
-- the plans a planner guesses then (a scan of the project per job) cost seconds, not milliseconds
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
as $$
declare
  tx bigint := txid_current();
  gone text[];
  delta work_counts[];
begin
  -- the rows of nodes that are no longer work (a task's kind changed), found id by id; most writes
  -- have none, and then no statement runs on work_items for them (nor its count trigger)
  gone := array(
    select i.id from unnest(ids) i(id)
    where exists (select 1 from work_items w where w.project_id = p and w.node_id = i.id offset 0)
      and not exists (
        select 1 from nodes n
        where n.project_id = p and n.id = i.id and (n.type = 'job' or (n.type = 'task' and n.data ->> 'kind' = 'do-it'))
        offset 0
      ));
  if cardinality(gone) > 0 then
    delete from work_items w where w.project_id = p and w.node_id = any(gone);
  end if;
  with recursive
  work as (
    select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord,
      case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
    from (select distinct i.id from unnest(ids) i(id)) i
    cross join lateral (select * from nodes n where n.project_id = p and n.id = i.id offset 0) n
    where n.type = 'job' or (n.type = 'task' and n.data ->> 'kind' = 'do-it')
  ),
  -- the jobs' parents (their approaches), each once: 100 jobs added under one approach walk up
  -- from it and read its blockers once, not 100 times
  parents as (
    select a.* from (select distinct j.parent_id from work j where j.type = 'job') j
    cross join lateral (select * from nodes a where a.project_id = p and a.id = j.parent_id offset 0) a
  ),
  -- each parent's ancestors, itself first, up to the nearest goal
  up (from_id, at_id, at_type, at_parent, depth) as (
    select a.id, a.id, a.type, a.parent_id, 0 from parents a
    union all
    select up.from_id, a.id, a.type, a.parent_id, up.depth + 1
    from up cross join lateral (select * from nodes a where a.project_id = p and a.id = up.at_parent offset 0) a
    where up.at_type <> 'goal' and up.depth < 100
  ),
  goals as (select from_id, at_id as goal_id from up where at_type = 'goal'),
  -- the parents' blockers (an approach's blockedBy), and which of them are not clear
  blockers as (
    select distinct b.v #>> '{}' as blocker
    from parents a
    cross join lateral jsonb_array_elements(case when jsonb_typeof(a.data -> 'blockedBy') = 'array' then a.data -> 'blockedBy' else '[]'::jsonb end) b(v)
    where jsonb_typeof(b.v) = 'string'
  ),
  unclear as materialized (
    select a.id
    from blockers bl
    cross join lateral (select * from nodes a where a.project_id = p and a.id = bl.blocker and a.type = 'approach' offset 0) a
    where (a.data ->> 'approachStatus') is distinct from 'resolved' and (a.data ->> 'approachStatus') is distinct from 'retired'
      and not (
        exists (select 1 from nodes j where j.project_id = p and j.parent_id = a.id and j.type = 'job' offset 0)
        and not exists (
          select 1 from nodes j
          where j.project_id = p and j.parent_id = a.id and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
          offset 0
        )
      )
  ),
  -- what each row needs of the sets above, as one value each: a planner without statistics would
  -- otherwise read a whole set once per row
  maps as (
    select
      coalesce((select jsonb_object_agg(from_id, goal_id) from goals), '{}'::jsonb) as goal_of,
      -- the parents held back by a blocker that is not clear: each parent's blockedBy read once, not
      -- once per job under it
      coalesce((
        select array_agg(a.id) from parents a
        where exists (
          select 1
          from jsonb_array_elements(case when jsonb_typeof(a.data -> 'blockedBy') = 'array' then a.data -> 'blockedBy' else '[]'::jsonb end) b(v)
          where jsonb_typeof(b.v) = 'string' and (b.v #>> '{}') in (select id from unclear)
        )), '{}'::text[]) as held,
      coalesce((select jsonb_object_agg(coalesce(name, ''), rank) from work_iter_ranks(p)), '{}'::jsonb) as rank_of
  ),
  written as (
    insert into work_items as w (project_id, node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank,
      focus, created_at, ord, touched_tx, blocked_before)
    select p, n.id, n.type, a.id, goal.id,
      (n.data ->> 'status') is distinct from 'done',
      n.type = 'job' and (
        coalesce(a.data ->> 'approachStatus' in ('retired', 'resolved'), false)
        or coalesce(goal.data ->> 'goalStatus' = 'done', false)
        or coalesce(a.id = any(m.held), false)
      ),
      case when n.type = 'task' and n.data -> 'urgent' = 'true'::jsonb then 0 else 1 end,
      n.iteration,
      coalesce((m.rank_of ->> n.iteration)::integer, (m.rank_of ->> '')::integer),
      case when n.type = 'job' and goal.data ->> 'goalStatus' = 'focus' then 0 else 1 end,
      n.created_at, n.ord, tx, false
    from work n
    cross join maps m
    left join lateral (select * from nodes a where n.type = 'job' and a.project_id = p and a.id = n.parent_id offset 0) a on true
    left join lateral (select * from nodes g where n.type = 'job' and g.project_id = p and g.id = (m.goal_of ->> n.parent_id) offset 0) goal on true
    on conflict (project_id, node_id) do update set
      type = excluded.type, approach_id = excluded.approach_id, goal_id = excluded.goal_id, open = excluded.open,
      blocked = excluded.blocked, urgent = excluded.urgent, iteration = excluded.iteration, iter_rank = excluded.iter_rank,
      focus = excluded.focus, created_at = excluded.created_at, ord = excluded.ord,
      blocked_before = case when w.touched_tx = excluded.touched_tx then w.blocked_before else w.open and w.blocked end,
      touched_tx = excluded.touched_tx
    -- which rows came: a row the upsert updated carries this transaction's lock in its xmax, a row it
    -- inserted none
    returning w.iteration, w.open, w.blocked, w.xmax = '0'::xid as came
  )
  -- the counts of the rows that came, as work_counts_inserted (0026) added them (those of the rows
  -- it updated are work_counts_update's, 0030, as before)
  select array(
    select row(p, c.iteration, sum((not c.blocked)::integer)::integer, sum(c.blocked::integer)::integer)::work_counts
    from written c where c.came and c.open group by c.iteration)
  into delta;
  perform work_counts_add(delta);
end
$$;

drop trigger work_counts_insert on work_items;
drop function work_counts_inserted();

-- 0030's recompute, the work items under the changed nodes found through nodes_parent: the jobs of
-- an approach are its children, and a goal's jobs are below it (no other goal between). The rest
-- is 0030's.
create or replace function work_after_change(changed jsonb) returns void
language plpgsql volatile
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
-- each statement planned once per connection (PostgreSQL would plan a statement with parameters
-- again at each call until a generic plan looked as cheap)
set plan_cache_mode = force_generic_plan
as $$
declare
  p text;
  ids text[];
  rel_ids text[];
  goal_ids text[];
  blockers text[];
  moved text[];
  blocked_apps text[] := '{}';
  affected text[];
begin
  for p in select distinct e ->> 'project_id' from jsonb_array_elements(changed) e loop
    -- one writer of a project's work state at a time (the key of sql/work/lock-project.sql): two
    -- writes that each finish one of a blocker's jobs must not both read the other's job as open
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
    -- every changed node; those of which what the rule reads changed (or the node came or went);
    -- the goals among those; those that moved
    select coalesce(array_agg(id), '{}'),
      coalesce(array_agg(id) filter (where ruled), '{}'),
      coalesce(array_agg(id) filter (where ruled and (type = 'goal' or old_type = 'goal')), '{}'),
      coalesce(array_agg(id) filter (where old_type is not null and type is not null and parent_id is distinct from old_parent_id), '{}')
    into ids, rel_ids, goal_ids, moved
    from (
      select id, type, old_type, parent_id, old_parent_id,
        type is distinct from old_type or parent_id is distinct from old_parent_id
          or data -> 'status' is distinct from old_data -> 'status'
          or data -> 'approachStatus' is distinct from old_data -> 'approachStatus'
          or data -> 'blockedBy' is distinct from old_data -> 'blockedBy'
          or data -> 'goalStatus' is distinct from old_data -> 'goalStatus' as ruled
      from work_changed_rows(changed, p)
    ) c;
    -- approaches whose clearness as a blocker may have changed: changed approaches, and the
    -- approaches (old and new parents) of changed jobs, each once (0030)
    with candidates as materialized (
      select distinct b from (
        select id as b from work_changed_rows(changed, p) where id = any(rel_ids) and (type = 'approach' or old_type = 'approach')
        union all select parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and type = 'job'
        union all select old_parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and old_type = 'job'
      ) c where b is not null
    )
    select coalesce(array_agg(x.b), '{}') into blockers from candidates x
      -- an approach that did not change itself and keeps an open job this write did not touch was
      -- not clear before and is not clear after: the jobs it blocks need no recompute (0018)
    where x.b = any(rel_ids) or not exists (
      select 1 from nodes j
      where j.project_id = p and j.parent_id = x.b and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
        and not (j.id = any(ids))
      -- asked of each approach through nodes_parent (without offset 0 a planner without
      -- statistics hashes the answer for all of them: every open job of the project read)
      offset 0
    );
    if cardinality(blockers) > 0 then
      select coalesce(array_agg(a.id), '{}') into blocked_apps from nodes a
      where a.type = 'approach' and (a.data -> 'blockedBy') ?| blockers and a.project_id = p;
    end if;
    -- the changed nodes themselves (an iteration or a kind moves the sort key), the jobs of changed
    -- approaches and of approaches blocked by a blocker that may have changed (their children, one
    -- probe of nodes_parent each), and the jobs of changed goals (below each, down to the jobs,
    -- not past another goal)
    affected := ids || array(
      select j.id from unnest(rel_ids || blocked_apps) x(id)
      cross join lateral (select j.id from nodes j where j.project_id = p and j.parent_id = x.id and j.type = 'job' offset 0) j
    );
    if cardinality(goal_ids) > 0 then
      affected := affected || array(
        with recursive down (id, type) as (
          select n.id, n.type from unnest(goal_ids) g(id)
          cross join lateral (select n.id, n.type from nodes n where n.project_id = p and n.parent_id = g.id offset 0) n
          union all
          select n.id, n.type from down d
          cross join lateral (select n.id, n.type from nodes n where n.project_id = p and n.parent_id = d.id offset 0) n
          where d.type not in ('goal', 'job')
        )
        select id from down where type = 'job'
      );
    end if;
    -- every node under a moved one (its goal may have changed)
    if cardinality(moved) > 0 then
      affected := affected || coalesce((
        with recursive down as (
          select n.id from nodes n where n.project_id = p and n.id = any(moved)
          union
          select n.id from nodes n join down d on n.project_id = p and n.parent_id = d.id
        )
        select array_agg(id) from down
      ), '{}');
    end if;
    perform work_refresh(p, array(select distinct unnest(affected)));
  end loop;
end
$$;
