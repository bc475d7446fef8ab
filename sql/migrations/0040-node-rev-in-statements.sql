-- A node's rev and field revs (live.md, 1; migration 0020) were set by nodes_rev, a BEFORE UPDATE
-- row trigger. Such a trigger costs an update more than its function does: the row is fetched and
-- locked again for it before its WHEN is read (issue 51, 3: a goal's label update's SQL on PGlite,
-- bench/write-update-sql.ts, 0.81x with the trigger off; 0.83-0.85x with the rev set by the
-- update statement instead). The four statements that update a node's data or parent set rev and
-- field_revs themselves now, the same values the trigger gave: sql/nodes/update.sql (a write's
-- update, a batch's, a revert's), set-classified.sql and set-classified-many.sql (the
-- classifier), move-iteration.sql (an iteration renamed). A statement added later that updates
-- data or parent_id of nodes must do the same (test/revisions.statements.test.ts reads sql/ for
-- it). An insert keeps nodes_rev_insert; the iterations keep iterations_rev.
drop trigger nodes_rev on nodes;
drop function nodes_rev_update();
