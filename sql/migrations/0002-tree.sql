-- The planning tree: nodes, iterations, the changelog of deletions, id counters,
-- and the outbox of domain events that webhooks, search and the canvas consume.

-- Node ids are <type>-<number>, never reused within a project: the counter only grows.
create table node_counters (
  project_id text not null references projects (id) on delete cascade,
  type text not null,
  last integer not null default 0,
  primary key (project_id, type)
);

create table nodes (
  project_id text not null references projects (id) on delete cascade,
  id text not null,
  type text not null check (type in ('goal', 'need', 'approach', 'job', 'task')),
  parent_id text,
  data jsonb not null,
  created_at timestamptz not null default now(),
  -- creation order within one timestamp (a batch shares one now())
  ord bigserial not null,
  updated_at timestamptz not null default now(),
  -- set once the asynchronous task classifier has looked at the task
  classified_at timestamptz,
  primary key (project_id, id)
);
create index nodes_parent on nodes (project_id, parent_id);
create index nodes_order on nodes (project_id, created_at, ord);
create index nodes_iteration on nodes (project_id, (data ->> 'iteration')) where type in ('job', 'task');
create index nodes_unclassified on nodes (created_at) where type = 'task' and classified_at is null;

create table iterations (
  project_id text not null references projects (id) on delete cascade,
  name text not null,
  status text not null default 'active' check (status in ('active', 'done')),
  system boolean not null default false,
  sort_order integer not null,
  git_tags jsonb not null default '[]',
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (project_id, name)
);

-- Every deleted node in full; restore reads it back.
create table changelog (
  id bigserial primary key,
  project_id text not null references projects (id) on delete cascade,
  node_id text not null,
  action text not null default 'delete',
  node jsonb not null,
  deleted_at timestamptz not null default now(),
  restored_at timestamptz
);
create index changelog_project on changelog (project_id, id desc);
create index changelog_node on changelog (project_id, node_id, id desc);

-- Transactional outbox: written in the same transaction as the change it describes.
-- payload is exactly the webhook payload of api.md (Events).
create table events (
  seq bigserial primary key,
  project_id text not null references projects (id) on delete cascade,
  type text not null,
  payload jsonb not null,
  created_at timestamptz not null default now()
);
create index events_project_seq on events (project_id, seq);
create index events_created on events (created_at);
