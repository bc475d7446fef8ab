-- $1 project_id text, $2 target_kind text, $3 target_id text: whether any change of the target is
-- still kept (HISTORY_DAYS): a stale write whose target has none counts every field as changed
select exists (
  select 1 from changes where project_id = $1 and target_id = $3 and target_kind = $2
) as kept
