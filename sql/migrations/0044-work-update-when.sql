-- A label update paid for the work state's update trigger (0016, its body 0027's) though the work
-- state reads nothing a label changes: a statement trigger fires on every UPDATE of nodes, and on
-- PGlite firing it (a PL/pgSQL call over the transition tables, whatever its body then finds) was
-- about a tenth of a label update's SQL (issue 51, 3; bench/writes.md, the twelfth pass). A
-- statement trigger cannot be kept from firing by what its rows changed (its WHEN reads no row).
--
-- The trigger is now a row trigger whose WHEN lets through only a row whose type, parent, or data
-- outside the fields the work state never reads (api.md's label, description, notes, maturity,
-- measure, kano, size, serves, externalRefs, demand, completedAt) changed: a superset of what the
-- body tests (status, approachStatus, blockedBy, goalStatus, kind; iteration, urgent), so every
-- row the body acts on reaches it (test/work.update-trigger.test.ts reads the work functions' keys
-- of data against the WHEN's list). A label update calls no trigger function.
--
-- The statement's work stays one pass over all its rows (the classifier's 100 tasks, an
-- iteration's rename moving every job: 0030): the trigger keeps its transition tables, the first
-- of a statement's rows to fire does the whole statement's work (0027's body), and leaves in
-- arbor.work_update_rows (transaction-local) how many of its rows fire after it; each of those
-- counts one down and returns. A statement's row events fire together at its end, one after the
-- other, before any later statement runs (no statement updates nodes in two of its parts, as two
-- writable CTEs would), and the body updates no node; the count is the WHEN's own test over the
-- transition tables, so it is how many PostgreSQL fires; a statement that fails takes the setting
-- back with it (set_config is undone with its (sub)transaction).
--
-- The WHEN is kept small on purpose: PostgreSQL reads a trigger's WHEN back from its stored text
-- and prepares it again in every statement that updates the table (TriggerEnabled: stringToNode,
-- ExecPrepareQual), so a WHEN comparing the seven fields one by one (the tenth pass's row trigger)
-- cost as much as the statement trigger's firing it spared.
drop trigger work_nodes_update on nodes;

-- 0027's body, run by the first row of a statement to fire; the later ones count down
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
      or n.data -> 'kind' is distinct from o.data -> 'kind' as ruled,
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
          or n.data -> 'kind' is distinct from o.data -> 'kind')
        and (n.data -> 'iteration' is distinct from o.data -> 'iteration' or n.data -> 'urgent' is distinct from o.data -> 'urgent')
    ) x
    where w.project_id = x.project_id and w.node_id = x.id;
  end if;
  return null;
end
$$;

create trigger work_nodes_update after update on nodes
referencing old table as old_nodes new table as new_nodes
for each row
when (new.type is distinct from old.type or new.parent_id is distinct from old.parent_id
  or (new.data - '{label,description,notes,maturity,measure,kano,size,serves,externalRefs,demand,completedAt}'::text[])
    is distinct from (old.data - '{label,description,notes,maturity,measure,kano,size,serves,externalRefs,demand,completedAt}'::text[]))
execute function work_nodes_updated();
