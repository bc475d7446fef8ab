-- $1 project_id text, $2 target_kind text, $3 target_id text: whether any change of the target is
-- still kept (HISTORY_DAYS): a stale write whose target has none counts every field as changed.
-- Its newest change, on changes_target (project_id, target_id, id desc): a walk that stops at the
-- first row. As `exists (…)` (which drops an `order by`), a custom plan for a target that holds
-- a large share of the changes expected to meet one soon in a sequential scan, and read every
-- change stored before the target's first one (bench/history-hot.ts).
select (
  select id from changes where project_id = $1 and target_id = $3 and target_kind = $2 order by id desc limit 1
) is not null as kept
