-- work_items' foreign key to projects checked every row inserted: a batch of 100 jobs ran 100
-- lookups of its project's row (each taking a key-share lock on it) just after the insert of its
-- 100 nodes had run the same 100 for nodes' own key. The key held nothing the nodes do not:
-- work_refresh inserts a work item only for a node it reads in the same statement, and that
-- node's key holds its project (deleting the project waits on the node's row, which the write
-- holds). Its cascade is not lost either: a deleted project takes its nodes along (nodes' key,
-- on delete cascade), and the nodes' delete trigger (work_nodes_delete, 0016/0027) removes their
-- work items (test/work.project-delete.test.ts).
alter table work_items drop constraint work_items_project_id_fkey;
