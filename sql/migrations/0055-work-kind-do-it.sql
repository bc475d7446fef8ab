-- A task classified (its kind set by the classify loop, or by a classify call) took the project's
-- work lock in the work state's update trigger (0044) whatever its new kind: `ruled` counted every
-- change of kind, so work_after_change ran and took the lock (sql/work/lock-project.sql's key) for
-- a task made a memo too, which is no work item before or after (a work item is a job or a do-it
-- task: 0030's work_refresh). It took it after the task's row: a write that held the lock and
-- needed the task deadlocked with it on PostgreSQL. Now a change of kind is the work state's only
-- when it makes the task a do-it or no longer one (the only kind the work state reads): a memo
-- classified asks the work state nothing, takes no lock and runs no recompute, and the classify
-- loop takes the lock first, without waiting, only for a project where it makes a task a do-it
-- (src/nodes/classify-loop.ts). The WHEN is 0044's (a kind change still fires the trigger; the row
-- then counts down as before); what the body does for every other change is 0044's.

-- 0044's function, but for its kind: a change of it is the work state's when it makes a task a do-it or no longer one
create or replace function work_nodes_updated() returns trigger
language plpgsql as $$
declare
  changed jsonb;
  resorted boolean;
  fired integer;
  left_over integer := coalesce(nullif(current_setting('arbor.work_update_rows', true), '')::integer, 0);
begin
  -- a later row of a statement whose first row to fire did the statement's work
  if left_over > 0 then
    perform set_config('arbor.work_update_rows', (left_over - 1)::text, true);
    return null;
  end if;
  select
    jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id,
      'data', n.data, 'old_type', o.type, 'old_parent_id', o.parent_id, 'old_data', o.data)) filter (where x.ruled),
    coalesce(bool_or(not x.ruled and x.sorted), false),
    -- the rows of this statement that fire this trigger (its WHEN, below)
    count(*) filter (where n.type is distinct from o.type or n.parent_id is distinct from o.parent_id
      or (n.data - '{label,description,notes,maturity,measure,kano,size,serves,externalRefs,demand,completedAt}'::text[])
        is distinct from (o.data - '{label,description,notes,maturity,measure,kano,size,serves,externalRefs,demand,completedAt}'::text[]))
  into changed, resorted, fired
  from new_nodes n join old_nodes o on o.project_id = n.project_id and o.id = n.id
  cross join lateral (select
    n.type is distinct from o.type or n.parent_id is distinct from o.parent_id
      or n.data -> 'status' is distinct from o.data -> 'status'
      or n.data -> 'approachStatus' is distinct from o.data -> 'approachStatus'
      or n.data -> 'blockedBy' is distinct from o.data -> 'blockedBy'
      or n.data -> 'goalStatus' is distinct from o.data -> 'goalStatus'
      or (n.data @> '{"kind":"do-it"}') is distinct from (o.data @> '{"kind":"do-it"}') as ruled,
    n.data -> 'iteration' is distinct from o.data -> 'iteration' or n.data -> 'urgent' is distinct from o.data -> 'urgent' as sorted
  ) x;
  if fired > 1 then
    perform set_config('arbor.work_update_rows', (fired - 1)::text, true);
  end if;
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
          or (n.data @> '{"kind":"do-it"}') is distinct from (o.data @> '{"kind":"do-it"}'))
        and (n.data -> 'iteration' is distinct from o.data -> 'iteration' or n.data -> 'urgent' is distinct from o.data -> 'urgent')
    ) x
    where w.project_id = x.project_id and w.node_id = x.id;
  end if;
  return null;
end
$$;
