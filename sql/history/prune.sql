-- $1 before timestamptz: changes older than the HISTORY_DAYS window go; returns how many
with gone as (delete from changes where at < $1 returning 1)
select count(*)::int as count from gone
