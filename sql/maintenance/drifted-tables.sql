-- No parameters: the tables whose planner statistics or dead rows have drifted past
-- autovacuum's default thresholds (PGlite runs no autovacuum): analyze once the rows changed
-- since the last analyze pass 50 + 10% of the live rows, vacuum once the dead rows pass 50 + 20%.
select schemaname as schema, relname as table,
  n_dead_tup > 50 + 0.2 * n_live_tup as vacuum
from pg_stat_user_tables
where n_mod_since_analyze > 50 + 0.1 * n_live_tup or n_dead_tup > 50 + 0.2 * n_live_tup
order by schemaname, relname
