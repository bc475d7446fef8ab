-- A node's rev and field revs (live.md, 1; migration 0020) were set by nodes_rev, a BEFORE UPDATE
-- row trigger. Such a trigger costs an update more than its function does: the row is fetched and
-- locked again for it before its WHEN is read (issue 51, 3: a goal's label update's SQL on PGlite,
-- bench/write-update-sql.ts "before 0040": with the trigger 1.10-1.13x the SQL with the rev set by
-- the update statement). The four statements that update a node's data or parent set rev and
-- field_revs themselves now, the same values the trigger gave: sql/nodes/update.sql (a write's
-- update, a batch's, a revert's), set-classified.sql and set-classified-many.sql (the
-- classifier), move-iteration.sql (an iteration renamed). A statement added later that updates
-- data or parent_id of nodes must do the same (test/revisions.statements.test.ts reads sql/ for
-- it). An insert keeps nodes_rev_insert; the iterations keep iterations_rev.
drop trigger nodes_rev on nodes;
drop function nodes_rev_update();

-- A change row wrote three index entries: its key (id), changes_project (project_id, id desc) for
-- GET /history and changes_target (project_id, target_id, id desc) for a node's history (migration
-- 0014). The key is now (project_id, id): it serves GET /history (newest first, a backward walk)
-- and a write's changes by id (sql/history/get-many.sql) as changes_project did, and
-- changes_project goes: two entries a row (a label update's SQL on PGlite 0.96-0.99x). The reads'
-- plans stay on these indexes, and GET /history's generic plan for a project holding most of the
-- rows no longer walks the key (id) filtering by project (bun bench/history-key.ts: 300,000
-- changes, its first page 1.3-1.8 ms before, 0.2-0.3 ms after). The prune (sql/history/prune.sql) and an
-- import's removal (sql/projects/delete-import-part.sql) name the project of the ids they delete.
alter table changes drop constraint changes_pkey, add primary key (project_id, id);
drop index changes_project;
