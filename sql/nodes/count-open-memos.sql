-- $1 project_id text: memos waiting in the inbox (tasks of kind memo not done), as the writes keep
-- their count (migration 0049: node_open_memos, none for a project that never had one)
select coalesce((select memos from node_open_memos where project_id = $1), 0) as count
