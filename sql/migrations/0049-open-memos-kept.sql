-- A task's add answers with the project's open memos once more than 20 wait (the inbox_overflow
-- advisory, api.md: its exact count `memos`), and counted them in the statement that reserves its
-- id (0010's partial index: one index entry and one heap row read per open memo). Every task the
-- classify loop makes a memo is one more row for every later add to read: at 700 open memos the
-- statement took 0.26 ms on PostgreSQL against 0.10 without the count, a task's add at 2.4× its
-- floor (issue 51, 3; bench/writes.md, "Thirteenth pass: the open memos' count"). The count is now kept, as the work state keeps its counts (issue
-- 51, 4): one row per project that has had an open memo, moved by the writes that make a node an
-- open memo or stop it being one (a task of kind memo not done: sql/nodes/count-open-memos.sql).
--
-- Its own row, not a column of the task counter's row (node_counters, which the add locks first):
-- a write that makes a memo (the classify loop, an update of kind or status, a delete, a revert)
-- holds the node's row when its trigger runs, and would then wait for the counter's row that an
-- add holds while it waits for a node row (its parent): counters are locked before nodes
-- (src/nodes/context.ts reserveIds). The add reads this row in its id's statement without locking
-- it, as it read the index before: the count as of that statement's snapshot.
create table node_open_memos (
  project_id text primary key references projects (id) on delete cascade,
  memos integer not null
);

-- What one row's insert, update or delete moved (its WHEN let through only rows that may have
-- moved it). The count's row is locked by its update until the commit, and only by writes that make
-- or unmake a memo. It takes no other lock: most of them hold the project's write lock from their
-- start (sql/work/lock-project.sql: a kind, a status, a delete, a batch, a revert, a restore), so
-- among those the row is not waited for; the classify loop's statement and classify (an update of
-- kind alone) take it after their tasks' rows and then only save their events and changes, so they
-- wait, holding it, for nothing a write takes before it. (Taking the project's write lock here would
-- make a memo's classification wait for it after its rows, which the work state's triggers need not
-- do.) Row triggers fire in name order: z_ puts these after work_nodes_update, so a statement whose
-- work trigger takes the project's write lock (a classification today) takes it before this row, as
-- the writes that hold it from their start do.
create function nodes_open_memos_moved() returns trigger
language plpgsql as $$
declare
  p text;
  moved integer;
begin
  if tg_op = 'DELETE' then
    p := old.project_id;
    moved := -(old.type = 'task' and old.data @> '{"kind": "memo"}' and not old.data @> '{"status": "done"}')::integer;
  elsif tg_op = 'INSERT' then
    p := new.project_id;
    moved := (new.type = 'task' and new.data @> '{"kind": "memo"}' and not new.data @> '{"status": "done"}')::integer;
  else
    p := new.project_id;
    moved := (new.type = 'task' and new.data @> '{"kind": "memo"}' and not new.data @> '{"status": "done"}')::integer
      - (old.type = 'task' and old.data @> '{"kind": "memo"}' and not old.data @> '{"status": "done"}')::integer;
  end if;
  if moved = 0 then
    return null;
  end if;
  -- the row is there but for a project's first memo (an update, cheaper than an insert's conflict);
  -- none to make for a count going down: a project deleted with its nodes (the foreign keys'
  -- cascade) may have lost its row already
  update node_open_memos set memos = memos + moved where project_id = p;
  if not found and moved > 0 then
    insert into node_open_memos as c (project_id, memos) values (p, moved)
    on conflict (project_id) do update set memos = c.memos + excluded.memos;
  end if;
  return null;
end
$$;

-- The WHENs are kept small (0044: PostgreSQL prepares a trigger's WHEN again in every statement on
-- the table): a node of kind memo inserted or deleted, an update of a node of kind memo before or
-- after; the function checks the rest (the type, the status) and returns at once when nothing
-- moved (a memo's label update). A goal's, a job's or an approach's label update, their adds, a
-- task's add without kind (every single add: the classify loop gives the kind) call nothing. (A WHEN
-- exact for an update, being an open memo changed, spares a memo's label update the call, and costs
-- every other update more: bun bench/open-memos-triggers.ts.) No statement changes a node's type.
create trigger z_open_memos_insert after insert on nodes
for each row when (new.data @> '{"kind": "memo"}') execute function nodes_open_memos_moved();
create trigger z_open_memos_update after update on nodes
for each row when (old.data @> '{"kind": "memo"}' or new.data @> '{"kind": "memo"}') execute function nodes_open_memos_moved();
create trigger z_open_memos_delete after delete on nodes
for each row when (old.data @> '{"kind": "memo"}') execute function nodes_open_memos_moved();

-- every project's open memos as they stand (a backup from before this migration is restored, then
-- migrated: its count is made here from its nodes)
insert into node_open_memos (project_id, memos)
select project_id, count(*)::integer from nodes
where type = 'task' and data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done'
group by project_id;

-- only the count read it (sql/nodes/count-open-memos.sql and allocate-task-id-counting-memos.sql,
-- which now read node_open_memos); every insert and every update of data paid for its predicate
drop index nodes_open_memos;
