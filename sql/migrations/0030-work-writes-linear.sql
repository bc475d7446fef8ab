-- A job added to an approach, or 100 jobs added by a batch, cost more the more work items the
-- project already held (issue 51, 3: bun bench/write-sql.ts job --siblings N). Statements of the
-- work-state triggers read the whole project, or read the rows of the statement once per row,
-- instead of reading the rows at hand; each is written again here, and every function keeps its
-- result:
--
-- 1. work_after_change read the work items of the changed approaches and goals in one statement
--    whose OR of three array conditions no index serves: it read every work item of the project
--    (3,000 for a job added beside 3,000 others). It is now one probe of each index by the ids.
--    And it asked "does this approach keep another open job" once per changed job, not once per
--    approach: 100 x 100 jobs read for a batch of 100 adds under one approach.
-- 2. work_refresh found the changed nodes through whichever index of nodes the planner liked; with
--    the ids spelled out (the custom plans of 0027 for more than 20 rows) that was nodes_iteration,
--    every job and task of the project, for a batch of 100 adds. The ids now drive the lookups,
--    and each job's ancestors and blockers are read once per approach, not once per job.
-- 3. work_counts_updated joined the statement's old and new rows, and inside work_refresh (whose
--    settings turn hash and merge joins off) that join was a nested loop: every new row against
--    every old one, 1,000 x 1,000 for a 1,000-item recompute. It now adds the new rows' counts and
--    takes the old rows' away, grouped, without pairing them: an unchanged row cancels out.
--
-- Every lookup by id is a lateral subquery with offset 0, which the planner keeps as written: as
-- joins, a planner without statistics (PGlite before the maintenance loop's first analyze) turned
-- them around and read the project to match the ids. The recompute's statements take their
-- generic plans whatever the number of rows: with the ids driving every lookup the generic plan is
-- the plan a custom one would make, and planning work_refresh's recursive insert anew for each
-- batch (0027) cost more than running it.

create or replace function work_counts_updated() returns trigger
language plpgsql as $$
begin
  -- only the counts that moved: a rerank or a recompute that changed nothing counted adds nothing
  perform work_counts_add(array(
    select row(x.project_id, x.iteration, sum(x.unblocked)::integer, sum(x.blocked)::integer)::work_counts
    from (
      select n.project_id, n.iteration, (not n.blocked)::integer as unblocked, n.blocked::integer as blocked
      from new_items n where n.open
      union all
      select o.project_id, o.iteration, -(not o.blocked)::integer, -o.blocked::integer
      from old_items o where o.open
    ) x
    group by x.project_id, x.iteration
    having sum(x.unblocked) <> 0 or sum(x.blocked) <> 0));
  return null;
end
$$;

-- The work_refresh of 0016, every node it reads found by its id (the primary key) and nothing
-- else, and the ancestors and blockers of the jobs' approaches read once per approach.
create or replace function work_refresh(p text, ids text[]) returns void
language plpgsql volatile
-- index lookups by id, whatever the statistics say: a table filled a moment ago has none, and
-- the plans a planner guesses then (a scan of the project per job) cost seconds, not milliseconds
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
as $$
declare
  tx bigint := txid_current();
  gone text[];
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
  unclear as (
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
      coalesce((select array_agg(id) from unclear), '{}'::text[]) as unclear,
      coalesce((select jsonb_object_agg(coalesce(name, ''), rank) from work_iter_ranks(p)), '{}'::jsonb) as rank_of
  )
  insert into work_items as w (project_id, node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank,
    focus, created_at, ord, touched_tx, blocked_before)
  select p, n.id, n.type, a.id, goal.id,
    (n.data ->> 'status') is distinct from 'done',
    n.type = 'job' and (
      coalesce(a.data ->> 'approachStatus' in ('retired', 'resolved'), false)
      or coalesce(goal.data ->> 'goalStatus' = 'done', false)
      or exists (
        select 1
        from jsonb_array_elements(case when jsonb_typeof(a.data -> 'blockedBy') = 'array' then a.data -> 'blockedBy' else '[]'::jsonb end) b(v)
        where jsonb_typeof(b.v) = 'string' and (b.v #>> '{}') = any(m.unclear)
      )
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
    touched_tx = excluded.touched_tx;
end
$$;

-- The recompute of 0027, its read of the work items under changed nodes made index probes, and
-- its plans generic for any number of rows.
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
    -- those that moved
    select coalesce(array_agg(id), '{}'),
      coalesce(array_agg(id) filter (
        where type is distinct from old_type or parent_id is distinct from old_parent_id
          or data -> 'status' is distinct from old_data -> 'status'
          or data -> 'approachStatus' is distinct from old_data -> 'approachStatus'
          or data -> 'blockedBy' is distinct from old_data -> 'blockedBy'
          or data -> 'goalStatus' is distinct from old_data -> 'goalStatus'), '{}'),
      coalesce(array_agg(id) filter (where old_type is not null and type is not null and parent_id is distinct from old_parent_id), '{}')
    into ids, rel_ids, moved
    from work_changed_rows(changed, p);
    -- approaches whose clearness as a blocker may have changed: changed approaches, and the
    -- approaches (old and new parents) of changed jobs
    -- (each approach once: asked once per changed job, the question below read the approach's jobs
    -- 100 times for a batch of 100 adds)
    with candidates as materialized (
      select distinct b from (
        select id as b from work_changed_rows(changed, p) where id = any(rel_ids) and (type = 'approach' or old_type = 'approach')
        union all select parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and type = 'job'
        union all select old_parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and old_type = 'job'
      ) c where b is not null
    )
    select coalesce(array_agg(x.b), '{}') into blockers from candidates x
      -- an approach that did not change itself and keeps an open job this write did not touch was
      -- not clear before and is not clear after: the jobs it blocks need no recompute (most done
      -- writes: a job done while others of its approach are still open)
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
    -- approaches and goals, and the jobs of approaches blocked by a blocker that may have changed:
    -- one probe of work_items_approach and one of work_items_goal (0016) by these ids
    affected := ids || array(
      select w.node_id from unnest(rel_ids || blocked_apps) x(id)
      cross join lateral (select w.node_id from work_items w where w.project_id = p and w.approach_id = x.id offset 0) w
      union all
      select w.node_id from unnest(rel_ids) x(id)
      cross join lateral (select w.node_id from work_items w where w.project_id = p and w.goal_id = x.id offset 0) w
    );
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

