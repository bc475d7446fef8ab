-- One command queue and one view state per view of a project, not per project: `app` is the
-- canvas at /app (every row so far), `chat` the plan an MCP host shows inside a conversation
-- (open_plan). Each view applies and confirms its own commands.
alter table view_states add column view text not null default 'app';
alter table view_states drop constraint view_states_pkey;
alter table view_states add primary key (project_id, view);
alter table view_commands add column view text not null default 'app';
alter table view_commands drop constraint view_commands_pkey;
alter table view_commands add primary key (project_id, view, seq);
