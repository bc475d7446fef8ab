-- Every committed write of a node or an iteration, one row per target it touched, written in the
-- write's own transaction (history.md, 2). txid: the writing transaction, so a page cursor can
-- name the snapshot its first page saw (a change committed later never lands between pages).
create table changes (
  id bigserial primary key,
  project_id text not null references projects (id) on delete cascade,
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
create index changes_request on changes (project_id, request_id);
create index changes_at on changes (at);
