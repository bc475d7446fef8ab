-- Claims (agents-and-app.md, 2): one agent owns a work item for a lease. A row per claimed
-- node; a released claim is deleted, an expired one stays until the next claim of its node
-- replaces it (every read compares expires_at with the caller's clock). Only a hash of the
-- token is kept, so a copy of the database hands out no claim.
create table claims (
  project_id text not null,
  node_id text not null,
  agent text not null,
  token_hash text not null,
  expires_at timestamptz not null,
  claimed_at timestamptz not null,
  primary key (project_id, node_id),
  -- deleting the node ends its claim
  foreign key (project_id, node_id) references nodes (project_id, id) on delete cascade
);
create unique index claims_token on claims (token_hash);
