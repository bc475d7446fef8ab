-- The live canvas (api.md, View state and View command): one view state per project, and the
-- commands waiting for a client. Commands are numbered per project; the state records the
-- last one a client applied, so a reader can confirm its command by id.
create table view_states (
  project_id text primary key references projects(id) on delete cascade,
  view_mode text not null default 'tree' check (view_mode in ('tree', 'matrix')),
  selected_iteration text,
  expanded_nodes jsonb not null default '[]',
  focused_goals jsonb not null default '[]',
  selected_node text,
  updated_at timestamptz,
  -- {id, type, at} of the last applied command, or null
  last_applied jsonb,
  -- id of the last applied command (0: none yet)
  command_seq bigint not null default 0,
  -- id of the last enqueued command
  enqueued_seq bigint not null default 0,
  -- the last heartbeat of a client; connected while it is under 30 s old
  last_client_seen timestamptz
);

create table view_commands (
  project_id text not null references projects(id) on delete cascade,
  seq bigint not null,
  command jsonb not null,
  created_at timestamptz not null,
  primary key (project_id, seq)
);
