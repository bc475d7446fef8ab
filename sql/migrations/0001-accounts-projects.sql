-- Users, their API keys (hashes only), projects and members, idempotency records, feedback.
-- Users and tiers are managed by the operator through the admin API.

create table users (
  id text primary key,
  name text not null,
  tier text not null default 'team' check (tier in ('free', 'strategist', 'builder', 'team')),
  status text not null default 'active' check (status in ('active', 'trialing', 'past_due', 'canceled')),
  lapsed boolean not null default false,
  contributor boolean not null default false,
  credits_used integer not null default 0,
  credits_limit integer,
  created_at timestamptz not null default now()
);

-- Only a SHA-256 of the key is kept: a lost key is replaced, never recovered.
create table api_keys (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  key_hash text not null unique,
  label text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_user on api_keys (user_id);

create table projects (
  id text primary key,
  name text not null,
  owner_id text not null references users (id),
  archived boolean not null default false,
  created_at timestamptz not null default now()
);
create index projects_owner on projects (owner_id, created_at);

create table project_members (
  project_id text not null references projects (id) on delete cascade,
  user_id text not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index project_members_user on project_members (user_id, created_at);

-- One row per (user, key). response is null while the first request still runs.
-- The primary key, not process memory, decides who runs first, so replicas agree.
create table idempotency_keys (
  user_id text not null references users (id) on delete cascade,
  key text not null,
  request_hash text not null,
  status_code integer,
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (user_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

create table feedback (
  id text primary key,
  user_id text not null references users (id) on delete cascade,
  agent_id text,
  kind text not null,
  summary text not null,
  details text,
  context jsonb,
  project_id text,
  created_at timestamptz not null default now()
);
create index feedback_user_created on feedback (user_id, created_at);
