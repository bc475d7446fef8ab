-- Leases: work that only one replica may do at a time (today: pushing the outbox to
-- Meilisearch, where two pushers could apply one node's add after its delete). A holder
-- renews its lease while it works; another replica takes over once it has expired.
create table leases (
  name text primary key,
  holder text not null,
  expires_at timestamptz not null
);
