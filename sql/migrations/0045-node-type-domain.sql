-- A node's write paid for nodes_type_check (migration 0002) more than its test: a table's CHECK
-- constraint is read back from its stored text and planned again by every statement that inserts or
-- updates the table, whatever columns it sets (ExecRelCheck: stringToNode, then ExecPrepareExpr; the
-- change row's case, migration 0042). Every add, label update, classification and iteration move
-- paid it, 5-8 us a statement: since, a node's insert is 0.95x and a label update 0.90x
-- on PGlite, 0.95x and 0.93x on PostgreSQL (bun bench/check-constraints.ts, bench/writes.md's
-- twelfth pass). A domain's check is planned once and kept in the type cache: the one statement
-- that writes a node's type (sql/nodes/insert-many.sql) casts it to node_type, the same rule, and
-- the table's constraint goes. No statement updates a node's type. The column stays text: a column
-- of the domain's type gains no more, but would have the table rewritten and change the type every
-- statement returning it reports (a server of the version before fails those it has prepared). A
-- statement added later that writes a node's type must cast it too (test/nodes.type-domain.test.ts
-- reads sql/ and src/ for it).
create domain node_type as text check (value in ('goal', 'need', 'approach', 'job', 'task'));
alter table nodes drop constraint nodes_type_check;
