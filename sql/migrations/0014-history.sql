-- Every committed write of a node or an iteration, one row per target it touched, written in the
-- write's own transaction (history.md, 2). txid: the writing transaction, so a page cursor can
-- name the snapshot its first page saw (a change committed later never lands between pages).
-- Kept cheap to write (history.md, 7: a 1,000-add batch writes 1,000 rows): no foreign key (a
-- project is never deleted; a key would cost a lookup and a lock per row) and two indexes beside
-- the key, the project's newest first and a node's; pruning walks the key (sql/history/prune.sql).
create table changes (
  id bigserial primary key,
  project_id text not null,
  at timestamptz not null default now(),
  txid xid8 not null default pg_current_xact_id(),
  user_id text,
  user_name text,
  key_id text,
  agent text,
  via text not null,
  request_id text not null,
  action text not null,
  target_kind text not null check (target_kind in ('node', 'iteration')),
  target_id text not null,
  target_type text,
  before jsonb,
  after jsonb,
  fields jsonb not null,
  revert_of bigint
);
create index changes_project on changes (project_id, id desc);
create index changes_target on changes (project_id, target_id, id desc);
