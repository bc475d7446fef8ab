-- The work-state triggers of 0016/0018/0023/0026 ran work a write could not need (issue 51, 3: a
-- single add or update at the speed of its SQL). Each function below does what it did, on fewer
-- rows or in fewer statements; the work state, its counts and _meta.unblocked stay the same.

-- An inserted node changes a work item only if it is one (a job, a task of kind do-it) or may block
-- one (an approach). 0026 already left goals and needs out; a task added through the API has no
-- kind yet (the classifier sets it later, by an update that the update trigger sees), so adding a
-- task ran the whole recompute for a row that is no work item: nothing names a task as its approach
-- or goal, and a task blocks nothing.
create or replace function work_nodes_inserted() returns trigger
language plpgsql as $$
declare
  changed jsonb;
begin
  select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id, 'data', n.data))
  into changed
  from new_nodes n where n.type in ('job', 'approach') or (n.type = 'task' and n.data ->> 'kind' = 'do-it');
  if changed is not null then
    perform work_changed(changed); -- deferred to the end of a batch or revert (0023)
  end if;
  return null;
end
$$;

-- A deleted node: its own work item goes (only jobs and tasks have one), and the recompute runs only
-- for a deleted job (its approach may turn clear) or approach (the jobs it blocked). A deleted goal,
-- need or task is nobody's blocker, and whatever is under it goes with it (nodes_parent_fk cascades,
-- 0003), so the recompute of 0016 found nothing to change for it.
create or replace function work_nodes_deleted() returns trigger
language plpgsql as $$
declare
  changed jsonb;
begin
  if exists (select 1 from old_nodes o where o.type in ('job', 'task')) then
    delete from work_items w using old_nodes o where w.project_id = o.project_id and w.node_id = o.id;
  end if;
  -- a deleted project takes its nodes along: nothing left to recompute
  select jsonb_agg(jsonb_build_object('project_id', o.project_id, 'id', o.id, 'old_type', o.type, 'old_parent_id', o.parent_id,
    'old_data', o.data))
  into changed
  from old_nodes o where o.type in ('job', 'approach') and exists (select 1 from projects p where p.id = o.project_id);
  if changed is not null then
    perform work_changed(changed);
  end if;
  return null;
end
$$;

-- An update: one pass over the changed rows finds both what the rule reads (recomputed) and the rows
-- whose sort key alone moved (their own row set); a write that changed neither (a label, a
-- description) runs no second statement, and so no statement on work_items and its count triggers.
create or replace function work_nodes_updated() returns trigger
language plpgsql as $$
declare
  changed jsonb;
  resorted boolean;
begin
  select
    jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id,
      'data', n.data, 'old_type', o.type, 'old_parent_id', o.parent_id, 'old_data', o.data)) filter (where x.ruled),
    coalesce(bool_or(not x.ruled and x.sorted), false)
  into changed, resorted
  from new_nodes n join old_nodes o on o.project_id = n.project_id and o.id = n.id
  cross join lateral (select
    n.type is distinct from o.type or n.parent_id is distinct from o.parent_id
      or n.data -> 'status' is distinct from o.data -> 'status'
      or n.data -> 'approachStatus' is distinct from o.data -> 'approachStatus'
      or n.data -> 'blockedBy' is distinct from o.data -> 'blockedBy'
      or n.data -> 'goalStatus' is distinct from o.data -> 'goalStatus'
      or n.data -> 'kind' is distinct from o.data -> 'kind' as ruled,
    n.data -> 'iteration' is distinct from o.data -> 'iteration' or n.data -> 'urgent' is distinct from o.data -> 'urgent' as sorted
  ) x;
  if changed is not null then
    perform work_changed(changed);
  end if;
  -- only the iteration or the urgent mark of a work item changed: its place in GET /ready's order
  -- moves, nothing else, so its own row is set through the primary key (as in 0016)
  if resorted then
    update work_items w set
      iteration = x.iteration,
      iter_rank = coalesce(
        (select r.rank from work_iter_ranks(x.project_id) r where r.name = x.iteration),
        (select r.rank from work_iter_ranks(x.project_id) r where r.name is null)),
      urgent = x.urgent
    from (
      select n.project_id, n.id,
        case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration,
        case when n.type = 'task' and n.data -> 'urgent' = 'true'::jsonb then 0 else 1 end as urgent
      from new_nodes n join old_nodes o on o.project_id = n.project_id and o.id = n.id
      where not (n.type is distinct from o.type or n.parent_id is distinct from o.parent_id
          or n.data -> 'status' is distinct from o.data -> 'status'
          or n.data -> 'approachStatus' is distinct from o.data -> 'approachStatus'
          or n.data -> 'blockedBy' is distinct from o.data -> 'blockedBy'
          or n.data -> 'goalStatus' is distinct from o.data -> 'goalStatus'
          or n.data -> 'kind' is distinct from o.data -> 'kind')
        and (n.data -> 'iteration' is distinct from o.data -> 'iteration' or n.data -> 'urgent' is distinct from o.data -> 'urgent')
    ) x
    where w.project_id = x.project_id and w.node_id = x.id;
  end if;
  return null;
end
$$;

-- The recompute of 0018, its three reads of the changed rows (all ids, those whose ruled fields
-- changed, those moved) made in one; and, for a few rows (up to 20: a single write), its
-- statements and work_refresh's planned once per connection. With custom plans (PostgreSQL's
-- default for a statement with parameters, re-planned at every call until a generic plan looks as
-- cheap) each call planned work_refresh's recursive insert again, most of the time of adding one
-- job (on PGlite, CPU time of the insert alternating the two ways in one process, three runs:
-- 0.53x, 0.64x, 0.77x). For many rows the plan made for the ids at hand is worth its planning (a
-- 1,000-job insert took 1.15x and 1.43x with the generic plan), and custom plans are forced there:
-- left to choose, the planner takes the generic plan once it has one. The plans are index lookups
-- either way, as the enable_* settings make them. The rest is 0018's.
create or replace function work_after_change(changed jsonb) returns void
language plpgsql volatile
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
-- set here so that what the body sets ends with the call
set plan_cache_mode = auto
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
  perform set_config('plan_cache_mode', case when jsonb_array_length(changed) <= 20 then 'force_generic_plan' else 'force_custom_plan' end, true);
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
    select coalesce(array_agg(distinct b), '{}') into blockers from (
      select id as b from work_changed_rows(changed, p) where id = any(rel_ids) and (type = 'approach' or old_type = 'approach')
      union all select parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and type = 'job'
      union all select old_parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and old_type = 'job'
    ) x where b is not null
      -- an approach that did not change itself and keeps an open job this write did not touch was
      -- not clear before and is not clear after: the jobs it blocks need no recompute (most done
      -- writes: a job done while others of its approach are still open)
      and (b = any(rel_ids) or not exists (
        select 1 from nodes j
        where j.project_id = p and j.parent_id = x.b and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
          and not (j.id = any(ids))
      ));
    if cardinality(blockers) > 0 then
      select coalesce(array_agg(a.id), '{}') into blocked_apps from nodes a
      where a.type = 'approach' and (a.data -> 'blockedBy') ?| blockers and a.project_id = p;
    end if;
    -- the changed nodes themselves (an iteration or a kind moves the sort key), the jobs of changed
    -- approaches and goals, and the jobs of approaches blocked by a blocker that may have changed
    affected := ids || coalesce((
      select array_agg(w.node_id) from work_items w
      where w.project_id = p and (w.approach_id = any(rel_ids) or w.goal_id = any(rel_ids) or w.approach_id = any(blocked_apps))
    ), '{}');
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
    affected := array(select distinct unnest(affected));
    perform set_config('plan_cache_mode', case when cardinality(affected) <= 20 then 'force_generic_plan' else 'force_custom_plan' end, true);
    perform work_refresh(p, affected);
  end loop;
end
$$;

-- The counts of 0026: the projects' locks taken in one statement (in project order, as before)
-- instead of a loop of them.
create or replace function work_counts_add(delta work_counts[]) returns void
language plpgsql volatile as $$
begin
  if coalesce(cardinality(delta), 0) = 0 then
    return;
  end if;
  perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || x.p, 0))
  from (select distinct d.project_id as p from unnest(delta) d order by 1) x;
  insert into work_counts as c (project_id, iteration, unblocked, blocked)
  select d.project_id, d.iteration, sum(d.unblocked), sum(d.blocked)
  from unnest(delta) d
  -- a deleted project takes its counts along
  where exists (select 1 from projects x where x.id = d.project_id)
  group by d.project_id, d.iteration
  having sum(d.unblocked) <> 0 or sum(d.blocked) <> 0
  on conflict on constraint work_counts_key do update
    set unblocked = c.unblocked + excluded.unblocked, blocked = c.blocked + excluded.blocked;
end
$$;
