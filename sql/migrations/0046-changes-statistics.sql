-- ANALYZE of changes cost PGlite more than a write's change row itself (bench/writes.md, "Twelfth
-- pass: history's share in the app"). PGlite runs no autovacuum: the maintenance loop
-- (src/maintenance/loop.ts) analyzes a table once 10% of its rows changed, so a project's changes
-- were analyzed after every tenth of their number of writes, each time reading a sample of up to
-- 30,000 rows and building statistics for all their columns, the jsonb ones sorted by jsonb's
-- comparison: 102 ms of PGlite CPU at 20,000 changes, 50 µs a write spread over the writes that
-- brought it (85 µs with nodes of a description, a priority and tags). The no-history process never paid it.
-- Statistics serve a planner that estimates a predicate, a join, a grouping or a sort on a
-- column; no statement reads changes by any of these nine (sql/history/*.sql filter, join and
-- sort on project_id, id, target_id, target_kind, user_id, agent, via, request_id, at and txid;
-- test/history.statistics.test.ts keeps it so), so ANALYZE skips them: the same analyze costs 18 ms
-- of PGlite CPU at 20,000 changes. Nothing a row holds changes, nor any plan of ours. On a
-- PostgreSQL server autovacuum's analyze of the same table falls from 83 to 17 ms of CPU.
alter table changes
  alter column before set statistics 0,
  alter column after set statistics 0,
  alter column fields set statistics 0,
  alter column proposal set statistics 0,
  alter column user_name set statistics 0,
  alter column key_id set statistics 0,
  alter column action set statistics 0,
  alter column target_type set statistics 0,
  alter column revert_of set statistics 0;
