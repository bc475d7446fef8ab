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

-- The rank of each iteration of project p in GET /ready's order: the current iteration (the first
-- active one that is not Later) 0, the other active ones 1, 2… in display order, Later after
-- them, a completed one last; and, under a null name, the rank of a name that is none of them
-- (or no iteration at all): last too. Later and last are fixed numbers above any position, not
-- counts of iterations, so adding an iteration at the end moves no work item's rank (a workflow
-- that adds 100 phases would otherwise rewrite every open item 100 times).
create function work_iter_ranks(p text) returns table (name text, rank integer)
language sql stable as $$
  with its as (
    select i.name, i.status, i.system,
      row_number() over (partition by (i.status = 'active' and not i.system) order by i.sort_order, i.created_at, i.name) - 1 as pos
    from iterations i where i.project_id = p
  )
  select its.name, case when its.system then 1000000000 when its.status = 'active' then its.pos::integer else 2000000000 end
  from its
  union all
  select null, 2000000000
$$;

-- Recompute the rows of these nodes of project p (a node that is no longer work loses its row), in
-- a few set-wide statements whatever the number of ids (a batch of 1,000 adds is one call).
create function work_refresh(p text, ids text[]) returns void
language plpgsql volatile
-- index lookups by id, whatever the statistics say: a table filled a moment ago has none, and
-- the plans a planner guesses then (a scan of the project per job) cost seconds, not milliseconds
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
as $$
declare
  tx bigint := txid_current();
begin
  delete from work_items w
  where w.project_id = p and w.node_id = any(ids)
    and not exists (
      select 1 from nodes n
      where n.project_id = p and n.id = w.node_id and (n.type = 'job' or (n.type = 'task' and n.data ->> 'kind' = 'do-it'))
    );
  with recursive
  work as (
    select n.id, n.type, n.parent_id, n.data, n.created_at, n.ord,
      case when jsonb_typeof(n.data -> 'iteration') = 'string' then n.data ->> 'iteration' end as iteration
    from nodes n
    where n.project_id = p and n.id = any(ids) and (n.type = 'job' or (n.type = 'task' and n.data ->> 'kind' = 'do-it'))
  ),
  -- each job's ancestors, its parent first, up to the nearest goal
  up (job_id, at_id, at_type, at_parent, depth) as (
    select j.id, a.id, a.type, a.parent_id, 0
    from work j join nodes a on a.project_id = p and a.id = j.parent_id
    where j.type = 'job'
    union all
    select up.job_id, a.id, a.type, a.parent_id, up.depth + 1
    from up join nodes a on a.project_id = p and a.id = up.at_parent
    where up.at_type <> 'goal' and up.depth < 100
  ),
  goals as (select job_id, at_id as goal_id from up where at_type = 'goal'),
  -- each job's blockers (its approach's blockedBy), and which of them are not clear
  blockers as (
    select distinct j.id as job_id, b.v #>> '{}' as blocker
    from work j
    join nodes a on a.project_id = p and a.id = j.parent_id
    cross join lateral jsonb_array_elements(case when jsonb_typeof(a.data -> 'blockedBy') = 'array' then a.data -> 'blockedBy' else '[]'::jsonb end) b(v)
    where j.type = 'job' and jsonb_typeof(b.v) = 'string'
  ),
  unclear as (
    select a.id
    from (select distinct blocker from blockers) bl
    join nodes a on a.project_id = p and a.id = bl.blocker and a.type = 'approach'
    where (a.data ->> 'approachStatus') is distinct from 'resolved' and (a.data ->> 'approachStatus') is distinct from 'retired'
      and not (
        exists (select 1 from nodes j where j.project_id = p and j.parent_id = a.id and j.type = 'job')
        and not exists (
          select 1 from nodes j
          where j.project_id = p and j.parent_id = a.id and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
        )
      )
  ),
  -- what each row needs of the sets above, as one value each: a planner without statistics would
  -- otherwise read a whole set once per row
  maps as (
    select
      coalesce((select jsonb_object_agg(job_id, goal_id) from goals), '{}'::jsonb) as goal_of,
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
  left join nodes a on n.type = 'job' and a.project_id = p and a.id = n.parent_id
  left join nodes goal on goal.project_id = p and goal.id = (m.goal_of ->> n.id)
  on conflict (project_id, node_id) do update set
    type = excluded.type, approach_id = excluded.approach_id, goal_id = excluded.goal_id, open = excluded.open,
    blocked = excluded.blocked, urgent = excluded.urgent, iteration = excluded.iteration, iter_rank = excluded.iter_rank,
    focus = excluded.focus, created_at = excluded.created_at, ord = excluded.ord,
    blocked_before = case when w.touched_tx = excluded.touched_tx then w.blocked_before else w.open and w.blocked end,
    touched_tx = excluded.touched_tx;
end
$$;

-- The changed nodes of project p, as rows.
create function work_changed_rows(changed jsonb, p text)
returns table (id text, type text, parent_id text, data jsonb, old_type text, old_parent_id text, old_data jsonb)
language sql immutable as $$
  select e ->> 'id', e ->> 'type', e ->> 'parent_id', e -> 'data', e ->> 'old_type', e ->> 'old_parent_id', e -> 'old_data'
  from jsonb_array_elements(changed) e where e ->> 'project_id' = p
$$;

-- The work items a change of these nodes may affect, recomputed. `changed` holds each changed
-- node's old and new version (either may be null), as objects of (project_id, id, type,
-- parent_id, data, old_type, old_parent_id, old_data). Each set is gathered into an array and
-- read back through an index, so a batch of 1,000 nodes costs a few statements.
create function work_after_change(changed jsonb) returns void
language plpgsql volatile
set enable_seqscan = off set enable_hashjoin = off set enable_mergejoin = off
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
    select coalesce(array_agg(id), '{}') into ids from work_changed_rows(changed, p);
    -- what of a node the rule reads changed (or the node came or went)
    select coalesce(array_agg(id), '{}') into rel_ids from work_changed_rows(changed, p)
    where type is distinct from old_type or parent_id is distinct from old_parent_id
      or data -> 'status' is distinct from old_data -> 'status'
      or data -> 'approachStatus' is distinct from old_data -> 'approachStatus'
      or data -> 'blockedBy' is distinct from old_data -> 'blockedBy'
      or data -> 'goalStatus' is distinct from old_data -> 'goalStatus';
    -- approaches whose clearness as a blocker may have changed: changed approaches, and the
    -- approaches (old and new parents) of changed jobs
    select coalesce(array_agg(distinct b), '{}') into blockers from (
      select id as b from work_changed_rows(changed, p) where id = any(rel_ids) and (type = 'approach' or old_type = 'approach')
      union all select parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and type = 'job'
      union all select old_parent_id from work_changed_rows(changed, p) where id = any(rel_ids) and old_type = 'job'
    ) x where b is not null;
    select coalesce(array_agg(id), '{}') into moved from work_changed_rows(changed, p)
    where old_type is not null and type is not null and parent_id is distinct from old_parent_id;
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
    perform work_refresh(p, array(select distinct unnest(affected)));
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
     -- a write that changed nothing the rule reads (a label, a description, the classifier's
     -- mark) costs nothing here, and one that moved only the sort key is the update below
     where n.type is distinct from o.type or n.parent_id is distinct from o.parent_id
       or n.data -> 'status' is distinct from o.data -> 'status'
       or n.data -> 'approachStatus' is distinct from o.data -> 'approachStatus'
       or n.data -> 'blockedBy' is distinct from o.data -> 'blockedBy'
       or n.data -> 'goalStatus' is distinct from o.data -> 'goalStatus'
       or n.data -> 'kind' is distinct from o.data -> 'kind'),
    '[]'::jsonb));
  -- only the iteration or the urgent mark of a work item changed: its place in GET /ready's order
  -- moves, nothing else (no item comes, goes, blocks or unblocks), so its own row is set through
  -- the primary key instead of the whole recompute (a workflow assigning 1,000 jobs to phases is
  -- 1,000 such writes)
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
create function work_rerank(p text) returns void
language sql volatile as $$
  with ranks as (select * from work_iter_ranks(p)), moved as (
    select w.node_id, coalesce(r.rank, (select x.rank from ranks x where x.name is null)) as rank
    from work_items w left join ranks r on r.name = w.iteration
    where w.project_id = p and w.open
  )
  update work_items w set iter_rank = m.rank
  from moved m
  where w.project_id = p and w.node_id = m.node_id and w.iter_rank is distinct from m.rank
$$;

create function work_iterations_changed() returns trigger
language plpgsql as $$
declare
  p text;
begin
  for p in
    select project_id from new_its union select project_id from old_its
  loop
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
    perform work_rerank(p);
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
    perform work_rerank(p);
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
    perform work_rerank(p);
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
