-- ANALYZE of changes reads a sample of 300 rows per unit of its columns' largest statistics target:
-- 30,000 at the default of 100, so up to 30,000 change rows each time PGlite's maintenance loop
-- (src/maintenance/loop.ts) or a server's autovacuum analyzes the table, once a tenth of it is new.
-- After 0046 that was 17-18 ms of CPU at 20,000 changes on both databases, 8.5-8.8 µs a change
-- row: most of what a change costs beyond its own insert (about 15 µs a row on PGlite), and a 100-add
-- batch records a hundred (bench/writes.md, "Thirteenth pass: history's share"). The ten columns
-- the reads use keep statistics, at 10: a sample of 3,000 rows, ten most common values and ten
-- histogram buckets each, 3.8-5.7 ms at 20,000 changes (bun bench/history-analyze.ts). Every read
-- of changes probes its keys (project_id with id, or with target_id and id) whatever the estimates,
-- and the plans of the seven reads, custom and generic, at 30,000 analyzed changes of seven projects
-- are those of the default target on PostgreSQL; on PGlite the same but a node's history, which
-- reads changes_target in order where the default's estimate took a bitmap scan and a sort of the
-- node's changes (bun bench/history-analyze.ts --plans). test/history.statistics.test.ts keeps it.
alter table changes
  alter column project_id set statistics 10,
  alter column id set statistics 10,
  alter column target_id set statistics 10,
  alter column target_kind set statistics 10,
  alter column user_id set statistics 10,
  alter column agent set statistics 10,
  alter column via set statistics 10,
  alter column request_id set statistics 10,
  alter column at set statistics 10,
  alter column txid set statistics 10;
