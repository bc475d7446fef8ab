-- A change row paid for changes_target_kind_check (migration 0014) more than its test: a table's CHECK
-- constraint is read back from its stored text and planned again by every statement that writes
-- the table, before its first row (ExecRelCheck: stringToNode, then ExecPrepareExpr), and a write
-- inserts its changes in one statement. On PGlite that was about a tenth of a label update's change
-- and event statement (bun bench/write-update-sql.ts --same --last, bench/README.md's eleventh
-- pass). A domain's check is planned once and kept in the type cache: the statements that insert
-- changes (sql/events/insert-with-change.sql, insert-with-changes.sql, sql/history/insert-many.sql)
-- cast the target's kind to change_target_kind, the same rule, and the table's constraint goes. The
-- column stays text (a column of the domain's type would have the whole table rewritten, and
-- changes are kept a year); a statement added later that inserts changes must cast it too
-- (test/history.statements.test.ts reads sql/ for it).
create domain change_target_kind as text check (value in ('node', 'iteration'));
alter table changes drop constraint changes_target_kind_check;
