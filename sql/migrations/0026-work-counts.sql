-- GET /ready's _meta (total, claimed, blocked) counted every open work item of the project on each
-- read: at 50,000 nodes with 45,000 ready a read spent most of its time counting (issue 51, 4).
-- The counts are now kept beside the work state, by the writes that change it: one row per project
-- and iteration (null: no iteration) with its open items not blocked (ready or claimed) and its
-- open items blocked. Statement triggers on work_items add what each statement changed, as one
-- grouped upsert whatever the number of rows (a batch of 1,000 adds is one statement). Claims stay
-- counted at read time: they expire without a write, and a project holds few of them.
create table work_counts (
  project_id text not null references projects (id) on delete cascade,
  iteration text,
  unblocked integer not null,
  blocked integer not null,
  constraint work_counts_key unique nulls not distinct (project_id, iteration)
);

-- Add the difference between these rows after (positive counts) and before (negative) a statement,
-- given as rows of work_counts (a composite array: nothing to build or parse per row). The
-- project's work-state lock (sql/work/lock-project.sql) comes first, in project order, so a write
-- that holds it and waits for a counts row never waits for one that holds the row and waits for it.
create function work_counts_add(delta work_counts[]) returns void
language plpgsql volatile as $$
declare
  p text;
begin
  -- most statements on work_items move no count (work_refresh's delete of rows that stay, a
  -- recompute that changed nothing counted, a rerank): nothing to lock or write
  if coalesce(cardinality(delta), 0) = 0 then
    return;
  end if;
  for p in select distinct d.project_id from unnest(delta) d order by 1 loop
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
  end loop;
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

create function work_counts_inserted() returns trigger
language plpgsql as $$
begin
  perform work_counts_add(array(
    select row(n.project_id, n.iteration, (not n.blocked)::integer, n.blocked::integer)::work_counts
    from new_items n where n.open));
  return null;
end
$$;

create function work_counts_updated() returns trigger
language plpgsql as $$
begin
  -- only the rows whose count moved: a rerank or a recompute that changed nothing counted adds nothing
  perform work_counts_add(array(
    select x.d from new_items n join old_items o on o.project_id = n.project_id and o.node_id = n.node_id
    cross join lateral (values
      (row(n.project_id, n.iteration, (n.open and not n.blocked)::integer, (n.open and n.blocked)::integer)::work_counts),
      (row(o.project_id, o.iteration, -(o.open and not o.blocked)::integer, -(o.open and o.blocked)::integer)::work_counts)) x(d)
    where (n.open, n.blocked, n.iteration) is distinct from (o.open, o.blocked, o.iteration) and (n.open or o.open)));
  return null;
end
$$;

create function work_counts_deleted() returns trigger
language plpgsql as $$
begin
  perform work_counts_add(array(
    select row(o.project_id, o.iteration, -(not o.blocked)::integer, -o.blocked::integer)::work_counts
    from old_items o where o.open));
  return null;
end
$$;

create trigger work_counts_insert after insert on work_items
referencing new table as new_items for each statement execute function work_counts_inserted();
create trigger work_counts_update after update on work_items
referencing old table as old_items new table as new_items for each statement execute function work_counts_updated();
create trigger work_counts_delete after delete on work_items
referencing old table as old_items for each statement execute function work_counts_deleted();

-- The counts of the work items that exist already.
insert into work_counts (project_id, iteration, unblocked, blocked)
select project_id, iteration, count(*) filter (where not blocked), count(*) filter (where blocked)
from work_items where open
group by project_id, iteration;

-- An added goal, need or any other node that is neither work (a job, a task) nor an approach (a
-- blocker: an approach that comes may block the jobs of approaches that name it) changes no work
-- item: nothing is under a node that did not exist (its children come in the same statement and
-- are recomputed as changed rows themselves), and only an approach blocks. The insert trigger now
-- leaves such rows out, so adding a goal runs no recompute at all (issue 51, 3: it ran the whole
-- of work_after_change on an empty set, a few set-wide statements and the project's lock).
create or replace function work_nodes_inserted() returns trigger
language plpgsql as $$
declare
  changed jsonb;
begin
  select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id, 'data', n.data))
  into changed
  from new_nodes n where n.type in ('job', 'task', 'approach');
  if changed is not null then
    perform work_changed(changed); -- deferred to the end of a batch or revert (0023)
  end if;
  return null;
end
$$;
