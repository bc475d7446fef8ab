-- Server secrets: random keys made on first use and shared by every replica through the
-- database. The workflow signs its opaque `state` tokens with the one named 'workflow-state'.
create table server_secrets (
  name text primary key,
  value text not null,
  created_at timestamptz not null default now()
);
