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

-- Add the difference between these rows after (sign 1) and before (sign -1) a statement. The
-- project's work-state lock (sql/work/lock-project.sql) comes first, in project order, so a write
-- that holds it and waits for a counts row never waits for one that holds the row and waits for it.
create function work_counts_add(delta jsonb) returns void
language plpgsql volatile as $$
declare
  p text;
begin
  -- most statements on work_items move no count (work_refresh's delete of rows that stay, a
  -- recompute that changed nothing counted, a rerank): nothing to lock or write
  if jsonb_array_length(delta) = 0 then
    return;
  end if;
  for p in select distinct e ->> 'p' from jsonb_array_elements(delta) e order by 1 loop
    perform pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0));
  end loop;
  insert into work_counts as c (project_id, iteration, unblocked, blocked)
  select e ->> 'p', e ->> 'i', sum((e ->> 'u')::integer), sum((e ->> 'b')::integer)
  from jsonb_array_elements(delta) e
  -- a deleted project takes its counts along
  where exists (select 1 from projects x where x.id = e ->> 'p')
  group by e ->> 'p', e ->> 'i'
  having sum((e ->> 'u')::integer) <> 0 or sum((e ->> 'b')::integer) <> 0
  on conflict on constraint work_counts_key do update
    set unblocked = c.unblocked + excluded.unblocked, blocked = c.blocked + excluded.blocked;
end
$$;

create function work_counts_inserted() returns trigger
language plpgsql as $$
begin
  perform work_counts_add(coalesce((
    select jsonb_agg(jsonb_build_object('p', n.project_id, 'i', n.iteration, 'u', (not n.blocked)::integer, 'b', n.blocked::integer))
    from new_items n where n.open), '[]'::jsonb));
  return null;
end
$$;

create function work_counts_updated() returns trigger
language plpgsql as $$
begin
  -- only the rows whose count moved: a rerank or a recompute that changed nothing counted adds nothing
  perform work_counts_add(coalesce((
    select jsonb_agg(x.e) from (
      select jsonb_build_array(
          jsonb_build_object('p', n.project_id, 'i', n.iteration, 'u', (n.open and not n.blocked)::integer, 'b', (n.open and n.blocked)::integer),
          jsonb_build_object('p', o.project_id, 'i', o.iteration, 'u', -(o.open and not o.blocked)::integer, 'b', -(o.open and o.blocked)::integer)) as pair
      from new_items n join old_items o on o.project_id = n.project_id and o.node_id = n.node_id
      where (n.open, n.blocked, n.iteration) is distinct from (o.open, o.blocked, o.iteration) and (n.open or o.open)
    ) y cross join lateral jsonb_array_elements(y.pair) x(e)), '[]'::jsonb));
  return null;
end
$$;

create function work_counts_deleted() returns trigger
language plpgsql as $$
begin
  perform work_counts_add(coalesce((
    select jsonb_agg(jsonb_build_object('p', o.project_id, 'i', o.iteration, 'u', -(not o.blocked)::integer, 'b', -o.blocked::integer))
    from old_items o where o.open), '[]'::jsonb));
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
