-- A node's write paid for nodes_type_check (migration 0002) more than its test: a table's CHECK
-- constraint is read back from its stored text and planned again by every statement that inserts or
-- updates the table, whatever columns it sets (ExecRelCheck: stringToNode, then ExecPrepareExpr; the
-- change row's case, migration 0042). Every add, label update, classification and iteration move
-- paid it: on PGlite 0.85-0.90x a node's insert or label update statement without it, on PostgreSQL
-- 0.90-0.96x (bun bench/check-constraints.ts, bench/writes.md's twelfth pass). A domain's check is
-- planned once and kept in the type cache: the one statement that writes a node's type
-- (sql/nodes/insert-many.sql) casts it to node_type, the same rule, and the table's constraint
-- goes. No statement updates a node's type. The column stays text: a column of the domain's type
-- would have the table rewritten, and made a label update slower, not faster (the same bench). A
-- statement added later that writes a node's type must cast it too (test/nodes.type-domain.test.ts
-- reads sql/ for it).
create domain node_type as text check (value in ('goal', 'need', 'approach', 'job', 'task'));
alter table nodes drop constraint nodes_type_check;
