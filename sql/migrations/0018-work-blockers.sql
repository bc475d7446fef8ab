-- A done write re-derived every job its approach blocks (often a hundred), though an approach
-- with another open job stays unclear either way: work_after_change now leaves such an approach
-- out of the blockers whose blocked jobs it recomputes. Only that selection differs from 0016.

create or replace function work_after_change(changed jsonb) returns void
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
    ) x where b is not null
      -- an approach that did not change itself and keeps an open job this write did not touch was
      -- not clear before and is not clear after: the jobs it blocks need no recompute (most done
      -- writes: a job done while others of its approach are still open)
      and (b = any(rel_ids) or not exists (
        select 1 from nodes j
        where j.project_id = p and j.parent_id = x.b and j.type = 'job' and (j.data ->> 'status') is distinct from 'done'
          and not (j.id = any(ids))
      ));
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
