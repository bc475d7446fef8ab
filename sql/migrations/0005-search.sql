-- Semantic search: sentence vectors kept in the database so a restart (or another replica)
-- never recomputes them, and the bookkeeping of the background work that fills them.

-- One vector per distinct text of a node (its label; its label with its description), keyed
-- by the embedder that made it: changing the embedder leaves the old vectors in place, so
-- switching back costs nothing, while the new embedder's vectors are filled in the background.
-- text_hash is a SHA-256 prefix of the embedded text, so an edit that keeps the text (a status
-- change, a move) reuses the vector, and an edit that changes it asks for a new one.
create table search_vectors (
  project_id text not null references projects (id) on delete cascade,
  embedder text not null,
  text_hash text not null,
  -- float32 little-endian, L2-normalised
  vector bytea not null,
  created_at timestamptz not null default now(),
  primary key (project_id, embedder, text_hash)
);

-- A project whose every node has vectors from `embedder` (the background backfill is done).
create table search_backfill (
  project_id text not null references projects (id) on delete cascade,
  embedder text not null,
  completed_at timestamptz not null default now(),
  primary key (project_id, embedder)
);

-- Cursors of consumers that follow the events outbox outside one process's memory
-- (the Meilisearch sync): the last seq applied.
create table search_cursors (
  consumer text primary key,
  seq bigint not null default 0,
  updated_at timestamptz not null default now()
);
