-- A batch of 100 jobs under one approach, two costs of its work state that no result needed
-- (issue 51, 3; bench/README.md, "Eighth pass: the batch"):
--
-- 1. work_refresh asked, for every job, whether its approach's blockedBy names a blocker that is
--    not clear: a set-returning function (jsonb_array_elements) run and materialized once per job,
--    100 times over the same approach. The answer is the approach's: it is now asked once per
--    approach (`held`, the parents that a blocker not clear holds back), and each job reads whether
--    its approach is among them. A job is blocked by its approach exactly when it was before.
-- 2. work_nodes_inserted set aside each inserted node with its whole `data`, which work_flush read
--    back (the batch's set-aside row, about 10 kB, stored compressed in work_pending and read
--    back from it) and work_after_change never read: for a node that came (no old version) the
--    rule's test of what changed is true by its type alone, and the rest of the recompute reads
--    the node's id, type and parent, and the nodes table itself. The inserted rows now carry
--    those only.
--
-- The rest of both functions is as 0030 and 0033 left them (0033: the jobs-only insert first).

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
  )
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
    touched_tx = excluded.touched_tx;
end
$$;

create or replace function work_nodes_inserted() returns trigger
language plpgsql as $$
declare
  changed jsonb;
  jobs_only boolean;
  p text;
  last_p text;
  ids text[];
begin
  -- 0033's jobs-only insert first (work_jobs_added); otherwise the change set aside, with no
  -- `data`: work_after_change reads none of a node that came (its old version is null)
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
  select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id))
  into changed
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  perform work_changed(changed); -- deferred to the end of a batch or revert (0023)
  return null;
end
$$;
