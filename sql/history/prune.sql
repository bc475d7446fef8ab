-- $1 before timestamptz: changes older than the HISTORY_DAYS window go; returns how many. Ids
-- grow with time, so the cut is the first id at or after the window, found along the key from the
-- oldest (the rows walked past are the ones deleted anyway); no index on `at` to keep up per write.
with gone as (
  delete from changes
  where id < (select coalesce(min(id), 9223372036854775807) from changes where at >= $1)
  returning 1
)
select count(*)::int as count from gone
