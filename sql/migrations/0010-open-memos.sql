-- Every task added asks how many memos wait in the project's inbox (the inbox_overflow advisory,
-- count-open-memos.sql). Without an index of its own that count read every node of the project,
-- so adds slowed as a project grew; this partial index holds the open memos alone.
create index nodes_open_memos on nodes (project_id)
  where type = 'task' and data ->> 'kind' = 'memo' and data ->> 'status' is distinct from 'done';
