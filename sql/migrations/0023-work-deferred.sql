-- A batch or a revert that changes many nodes one statement at a time (449 updates, each setting
-- an approach's blockedBy) ran the work-state recompute of 0016 once per statement: each time the
-- jobs of every approach the changed one blocks (about 50), 449 times over, 6 s on PGlite, which
-- holds its one connection (and every other tenant) for as long. While a write sets
-- arbor.work_defer (transaction-local; src/work, around a batch or a revert), the node triggers
-- set the changes aside in work_pending instead, and work_flush recomputes them once, in one
-- work_after_change over all of them: the same rows, once. The write calls it before it reads the
-- work state back (_meta.unblocked); a deferred constraint trigger calls it at the commit too, so a
-- write that set the flag and did not flush still commits a true work state.
create unlogged table work_pending (
  tx bigint not null,
  changed jsonb not null
);
create index work_pending_tx on work_pending (tx);

-- The node triggers' changes: recomputed now, or set aside while the transaction defers them.
create function work_changed(changed jsonb) returns void
language plpgsql volatile as $$
begin
  if changed is null or jsonb_array_length(changed) = 0 then
    return;
  end if;
  if current_setting('arbor.work_defer', true) = 'on' then
    insert into work_pending (tx, changed) values (txid_current(), changed);
  else
    perform work_after_change(changed);
  end if;
end
$$;

-- Every change this transaction set aside, recomputed at once; deferral ends with it. A node
-- changed twice is there twice (old to middle, middle to new): work_after_change reads the
-- union, and the nodes as they stand now.
create function work_flush() returns void
language plpgsql volatile as $$
declare
  all_changed jsonb;
begin
  perform set_config('arbor.work_defer', 'off', true);
  with gone as (delete from work_pending where tx = txid_current() returning changed)
  select jsonb_agg(e) into all_changed from gone cross join lateral jsonb_array_elements(gone.changed) e;
  if all_changed is not null then
    perform work_after_change(all_changed);
  end if;
end
$$;

-- At the commit, once per row set aside: only the first finds the flag still on (work_flush turns
-- it off, and rows are set aside only while it is on); the others return at once instead of each
-- scanning the deleted rows again (1,000 deletes of a revert: a million index entries).
create function work_pending_at_commit() returns trigger
language plpgsql as $$
begin
  if current_setting('arbor.work_defer', true) = 'on' then
    perform work_flush();
  end if;
  return null;
end
$$;

create constraint trigger work_pending_commit after insert on work_pending
deferrable initially deferred for each row execute function work_pending_at_commit();

create or replace function work_nodes_inserted() returns trigger
language plpgsql as $$
begin
  perform work_changed(coalesce(
    (select jsonb_agg(jsonb_build_object('project_id', n.project_id, 'id', n.id, 'type', n.type, 'parent_id', n.parent_id, 'data', n.data))
     from new_nodes n),
    '[]'::jsonb));
  return null;
end
$$;

create or replace function work_nodes_updated() returns trigger
language plpgsql as $$
begin
  perform work_changed(coalesce(
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

create or replace function work_nodes_deleted() returns trigger
language plpgsql as $$
begin
  delete from work_items w using old_nodes o where w.project_id = o.project_id and w.node_id = o.id;
  -- a deleted project takes its nodes along: nothing left to recompute
  perform work_changed(coalesce(
    (select jsonb_agg(jsonb_build_object('project_id', o.project_id, 'id', o.id, 'old_type', o.type, 'old_parent_id', o.parent_id,
       'old_data', o.data))
     from old_nodes o where exists (select 1 from projects p where p.id = o.project_id)),
    '[]'::jsonb));
  return null;
end
$$;
