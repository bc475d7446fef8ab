-- The server processes that answer cached reads from memory (src/revisions/replicas.ts): each
-- holds a lease it renews every second. A write does not answer before every replica whose
-- lease is live has heard of its commit, or that lease has run out (a replica that stops
-- renewing stops answering from memory before its lease ends).
create table replicas (
  id text primary key,
  lease_until timestamptz not null
);
