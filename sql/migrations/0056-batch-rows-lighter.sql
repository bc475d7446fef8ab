-- What a 100-add batch's rows paid row by row beyond the rows themselves (bench/writes.md,
-- "Fifteenth pass: the 100-add batch"), in the backend's CPU on PostgreSQL:
--
-- The events' foreign key to projects ran a lookup of the project's row for every event (each
-- taking a key-share lock on it): 100 for a batch, about 0.5 ms of its saving step. It held
-- nothing the write does not hold already. Every event is written by the outbox (src/events/outbox.ts
-- `emit`) in the transaction of the write it describes, a write of rows keyed to the project
-- (nodes, iterations, claims, proposals) whose own keys and row locks make a delete of the project
-- wait for it; and the one statement that deletes a project (sql/projects/delete-import.sql, an
-- import never finished) runs once sql/projects/delete-import-part.sql has removed its events,
-- as it removes its changes, which never had a foreign key. The events are now kept as the
-- changes are; work_items' key went the same way (0032).
alter table events drop constraint events_project_id_fkey;

-- nodes_rev_insert (0020) called a PL/pgSQL function for every node inserted, to set its
-- field_revs to {"*": rev}: about 0.3-0.4 ms of a batch's nodes' statement. The nodes' one insert
-- (sql/nodes/insert-many.sql) now sets rev and field_revs itself, and the trigger stays for any
-- other insert, only for a row that comes without its field_revs (the column's default, '{}').
drop trigger nodes_rev_insert on nodes;
create trigger nodes_rev_insert before insert on nodes
for each row when (new.field_revs = '{}'::jsonb) execute function targets_rev_insert();
