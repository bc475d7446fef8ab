-- The readiness rule of agents-and-app.md (1) kept as indexed state, so GET /ready, a claim with
-- count and a done write's _meta.unblocked read a few index entries instead of the whole project.
-- One row per work item (a job, or a task of kind do-it): whether it is open, whether it is blocked
-- for a reason other than a claim (its approach retired or resolved, a blocker not clear, its goal
-- done), and GET /ready's sort key. Claims stay in their own table (they expire without a write):
-- a read leaves out the items held by a live claim at its own clock.
--
-- Triggers on nodes and iterations keep it in the transaction of every write, whatever path wrote
-- (an action, a batch, an import, a restore, an iteration's rename). They read nodes and
-- iterations directly, like sql/search: a service round trip per row would cost more than the
-- rule it keeps.
create table work_items (
  project_id text not null references projects (id) on delete cascade,
  node_id text not null,
  type text not null,
  -- a job's parent (its approach), so the spread-first claim groups by it
  approach_id text,
  -- a job's nearest goal ancestor, so a goal's change reaches its jobs through an index
  goal_id text,
  open boolean not null,
  blocked boolean not null,
  -- GET /ready's order: urgent tasks (0), the iteration's rank, jobs under a focus goal (0), creation
  urgent smallint not null,
  iteration text,
  iter_rank integer not null,
  focus smallint not null,
  created_at timestamptz not null,
  ord bigint not null,
  -- the transaction that last recomputed the row, and whether the item was blocked before it
  -- (open and blocked): a write reads what it unblocked back from these two (src/work)
  touched_tx bigint not null,
  blocked_before boolean not null,
  primary key (project_id, node_id)
);
create index work_items_ready on work_items (project_id, urgent, iter_rank, focus, created_at, ord) where open and not blocked;
create index work_items_ready_iteration on work_items (project_id, iteration) where open and not blocked;
create index work_items_blocked on work_items (project_id, iteration) where open and blocked;
create index work_items_approach on work_items (project_id, approach_id) where approach_id is not null;
create index work_items_goal on work_items (project_id, goal_id) where goal_id is not null;
create index work_items_touched on work_items (project_id, touched_tx) where blocked_before;
-- the approaches whose blockedBy names a given id (a blocker's change reaches the jobs it blocks)
create index nodes_blocked_by on nodes using gin ((data -> 'blockedBy')) where type = 'approach';

-- The rank of an iteration name in GET /ready's order: the current iteration (the first active
-- one that is not Later) 0, the other active ones 1, 2… in display order, Later after them, a
-- completed or unknown one (or none) last.
create function work_iter_rank(p text, iteration text) returns integer
language sql stable as $$
  with its as (
    select name, status, system,
      row_number() over (partition by (status = 'active' and not system) order by sort_order, created_at, name) - 1 as pos
    from iterations where project_id = p
  ), n as (select count(*)::integer as n from its)
  select coalesce(
    (select case when its.system then n.n + 1 when its.status = 'active' then its.pos::integer end from its where its.name = iteration),
    n.n + 2)
  from n
$$;

-- Is this id a clear blocker: gone or not an approach, resolved or retired, or with at least one
-- job and every job done?
create function work_blocker_clear(p text, blocker text) returns boolean
language sql stable as $$
  select case
    when a.id is null then true
    when a.data ->> 'approachStatus' in ('resolved', 'retired') then true
    else exists (select 1 from nodes j where j.project_id = p and j.parent_id = blocker and j.type = 'job')
      and not exists (
        select 1 from nodes j
        where j.project_id = p and j.parent_id = blocker and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
      )
  end
  from (select 1) one
  left join nodes a on a.project_id = p and a.id = blocker and a.type = 'approach'
$$;

-- The nearest goal above a node (the node's parent first), or null.
create function work_goal_of(p text, parent text) returns text
language plpgsql stable as $$
declare
  at text := parent;
  t text;
  up text;
  depth integer := 0;
begin
  while at is not null and depth < 100 loop
    select type, parent_id into t, up from nodes where project_id = p and id = at;
    if not found then return null; end if;
    if t = 'goal' then return at; end if;
    at := up;
    depth := depth + 1;
  end loop;
  return null;
end
$$;

-- Recompute the rows of these nodes of project p (a node that is no longer work loses its row).
create function work_refresh(p text, ids text[]) returns void
language plpgsql volatile as $$
declare
  tx bigint := txid_current();
begin
  delete from work_items w
  where w.project_id = p and w.node_id = any(ids)
    and not exists (
      select 1 from nodes n
      where n.project_id = p and n.id = w.node_id and (n.type = 'job' or (n.type = 'task' and n.data ->> 'kind' = 'do-it'))
    );
  insert into work_items as w (project_id, node_id, type, approach_id, goal_id, open, blocked, urgent, iteration, iter_rank,
    focus, created_at, ord, touched_tx, blocked_before)
  select p, n.id, n.type, a.id, g.goal_id,
    (n.data ->> 'status') is distinct from 'done',
    n.type = 'job' and (
      coalesce(a.data ->> 'approachStatus' in ('retired', 'resolved'), false)
      or coalesce(goal.data ->> 'goalStatus' = 'done', false)
      or exists (
        select 1
        from jsonb_array_elements(case when jsonb_typeof(a.data -> 'blockedBy') = 'array' then a.data -> 'blockedBy' else '[]'::jsonb end) b(v)
        where jsonb_typeof(b.v) = 'string' and not work_blocker_clear(p, b.v #>> '{}')
      )
    ),
    case when n.type = 'task' and n.data -> 'urgent' = 'true'::jsonb then 0 else 1 end,
    case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end,
    work_iter_rank(p, case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end),
    case when n.type = 'job' and goal.data ->> 'goalStatus' = 'focus' then 0 else 1 end,
    n.created_at, n.ord, tx, false
  from nodes n
  left join nodes a on n.type = 'job' and a.project_id = p and a.id = n.parent_id
  left join lateral (select case when n.type = 'job' then work_goal_of(p, n.parent_id) end as goal_id) g on true
  left join nodes goal on goal.project_id = p and goal.id = g.goal_id
  where n.project_id = p and n.id = any(ids) and (n.type = 'job' or (n.type = 'task' and n.data ->> 'kind' = 'do-it'))
  on conflict (project_id, node_id) do update set
    type = excluded.type, approach_id = excluded.approach_id, goal_id = excluded.goal_id, open = excluded.open,
    blocked = excluded.blocked, urgent = excluded.urgent, iteration = excluded.iteration, iter_rank = excluded.iter_rank,
    focus = excluded.focus, created_at = excluded.created_at, ord = excluded.ord,
    blocked_before = case when w.touched_tx = excluded.touched_tx then w.blocked_before else w.open and w.blocked end,
    touched_tx = excluded.touched_tx;
end
$$;

-- The work items a change of these nodes may affect, recomputed. `changed` holds each changed
-- node's old and new version (either may be null), as rows of (project_id, id, type, parent_id,
-- data, old_type, old_parent_id, old_data).
create function work_after_change(changed jsonb) returns void
language plpgsql volatile as $$
declare
  r record;
begin
  for r in
    with c as (
      select e ->> 'project_id' as project_id, e ->> 'id' as id, e ->> 'type' as type, e ->> 'parent_id' as parent_id,
        e -> 'data' as data, e ->> 'old_type' as old_type, e ->> 'old_parent_id' as old_parent_id, e -> 'old_data' as old_data
      from jsonb_array_elements(changed) e
    ),
    -- what of a node the rule reads changed (or the node came or went)
    rel as (
      select * from c
      where type is distinct from old_type or parent_id is distinct from old_parent_id
        or data -> 'status' is distinct from old_data -> 'status'
        or data -> 'approachStatus' is distinct from old_data -> 'approachStatus'
        or data -> 'blockedBy' is distinct from old_data -> 'blockedBy'
        or data -> 'goalStatus' is distinct from old_data -> 'goalStatus'
    ),
    -- approaches whose clearness as a blocker may have changed: changed approaches, and the
    -- approaches (old and new parents) of changed jobs
    blockers as (
      select project_id, id from rel where type = 'approach' or old_type = 'approach'
      union select project_id, parent_id from rel where type = 'job' and parent_id is not null
      union select project_id, old_parent_id from rel where old_type = 'job' and old_parent_id is not null
    ),
    moved as (
      select project_id, id from rel where old_type is not null and type is not null and parent_id is distinct from old_parent_id
    ),
    -- every node under a moved one (its goal may have changed)
    sub as (
      with recursive down as (
        select n.project_id, n.id from nodes n join moved m on n.project_id = m.project_id and n.id = m.id
        union
        select n.project_id, n.id from nodes n join down d on n.project_id = d.project_id and n.parent_id = d.id
      )
      select project_id, id from down
    ),
    affected as (
      -- the changed nodes themselves (any change: a label or an iteration moves the sort key)
      select project_id, id from c
      -- the jobs of changed approaches and of changed goals
      union select w.project_id, w.node_id from work_items w join rel on w.project_id = rel.project_id and w.approach_id = rel.id
      union select w.project_id, w.node_id from work_items w join rel on w.project_id = rel.project_id and w.goal_id = rel.id
      -- the jobs of approaches blocked by a blocker that may have changed
      union select j.project_id, j.id
        from blockers b
        join nodes a on a.project_id = b.project_id and a.type = 'approach' and (a.data -> 'blockedBy') ? b.id
        join nodes j on j.project_id = a.project_id and j.parent_id = a.id and j.type = 'job'
      union select project_id, id from sub
    )
    select project_id, array_agg(distinct id) as ids from affected group by project_id
  loop
    -- one writer of a project's work state at a time (the key of sql/work/lock-project.sql): two
    -- writes that each finish one of a blocker's jobs must not both read the other's job as open
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || r.project_id, 0));
    perform work_refresh(r.project_id, r.ids);
  end loop;
end
$$;

create function work_nodes_inserted() returns trigger
language plpgsql as $$
begin
  perform work_after_change(coalesce(
    (select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id, 'data', n.data))
     from new_nodes n),
    '[]'::jsonb));
  return null;
end
$$;

create function work_nodes_updated() returns trigger
language plpgsql as $$
begin
  perform work_after_change(coalesce(
    (select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id,
       'data', n.data, 'old_type', o.type, 'old_parent_id', o.parent_id, 'old_data', o.data))
     from new_nodes n join old_nodes o on o.project_id = n.project_id and o.id = n.id
     -- a write that changed nothing the rule or the order reads (the classifier's mark) costs nothing here
     where n.type is distinct from o.type or n.parent_id is distinct from o.parent_id or n.data is distinct from o.data),
    '[]'::jsonb));
  return null;
end
$$;

create function work_nodes_deleted() returns trigger
language plpgsql as $$
begin
  delete from work_items w using old_nodes o where w.project_id = o.project_id and w.node_id = o.id;
  -- a deleted project takes its nodes along: nothing left to recompute
  perform work_after_change(coalesce(
    (select jsonb_agg(jsonb_build_object('project_id', o.project_id, 'id', o.id, 'old_type', o.type, 'old_parent_id', o.parent_id,
       'old_data', o.data))
     from old_nodes o where exists (select 1 from projects p where p.id = o.project_id)),
    '[]'::jsonb));
  return null;
end
$$;

create trigger work_nodes_insert after insert on nodes
referencing new table as new_nodes for each statement execute function work_nodes_inserted();
create trigger work_nodes_update after update on nodes
referencing old table as old_nodes new table as new_nodes for each statement execute function work_nodes_updated();
create trigger work_nodes_delete after delete on nodes
referencing old table as old_nodes for each statement execute function work_nodes_deleted();

-- An iteration added, renamed, completed, reordered or deleted moves the rank of the project's
-- open work items.
create function work_iterations_changed() returns trigger
language plpgsql as $$
declare
  p text;
begin
  for p in
    select project_id from new_its union select project_id from old_its
  loop
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
    update work_items set iter_rank = work_iter_rank(p, iteration)
    where project_id = p and open and iter_rank is distinct from work_iter_rank(p, iteration);
  end loop;
  return null;
end
$$;

create function work_iterations_inserted() returns trigger
language plpgsql as $$
declare
  p text;
begin
  for p in select distinct project_id from new_its loop
    update work_items set iter_rank = work_iter_rank(p, iteration)
    where project_id = p and open and iter_rank is distinct from work_iter_rank(p, iteration);
  end loop;
  return null;
end
$$;

create function work_iterations_deleted() returns trigger
language plpgsql as $$
declare
  p text;
begin
  for p in select distinct project_id from old_its where exists (select 1 from projects x where x.id = old_its.project_id) loop
    update work_items set iter_rank = work_iter_rank(p, iteration)
    where project_id = p and open and iter_rank is distinct from work_iter_rank(p, iteration);
  end loop;
  return null;
end
$$;

create trigger work_iterations_insert after insert on iterations
referencing new table as new_its for each statement execute function work_iterations_inserted();
create trigger work_iterations_update after update on iterations
referencing old table as old_its new table as new_its for each statement execute function work_iterations_changed();
create trigger work_iterations_delete after delete on iterations
referencing old table as old_its for each statement execute function work_iterations_deleted();

-- The work items that exist already.
select work_refresh(project_id, array_agg(id)) from nodes where type in ('job', 'task') group by project_id;

-- A claim's own length (agents-and-app.md, 2, and docs/agents.md): a write that carries its token,
-- or a read of its node by its agent, renews it to that length from then. A claim taken before
-- this migration: the length it was taken or last renewed for.
alter table claims add column lease_seconds integer;
update claims set lease_seconds = greatest(30, ceil(extract(epoch from expires_at - claimed_at)))::integer;
alter table claims alter column lease_seconds set not null;

-- An Idempotency-Key's record says whether its request holds it locked while it runs (src/http/
-- idempotency.ts): then a retry that finds it unanswered and unlocked knows the process that ran
-- it died (kill -9, a crash) and runs the write itself, at once, instead of hearing "in progress"
-- for the 10 minutes of claim.sql. A record claimed before this migration is not held.
alter table idempotency_keys add column held boolean not null default false;
