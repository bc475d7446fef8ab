-- $1 before timestamptz: proposals made before the HISTORY_DAYS window go; returns how many
with gone as (
  delete from proposals where created_at < $1
  returning 1
)
select count(*)::int as count from gone
