-- Proposals (live.md §5): a batch of mutations a member (often an agent) proposes and a person
-- applies or rejects. Stored without touching the tree: `mutations` as sent, `preview` the
-- changes applying it would have made when it was proposed (history.md's change shape), and
-- `base_revs` the rev of every existing node it touches, checked as ifRev when it is applied.
-- `seq` orders them (newest first); `id` (prp_…) is what the API shows. Kept HISTORY_DAYS after
-- they were made, like the changes.
create table proposals (
  seq bigserial primary key,
  id text not null unique,
  project_id text not null references projects (id) on delete cascade,
  status text not null default 'open' check (status in ('open', 'applied', 'rejected', 'withdrawn')),
  title text not null,
  note text,
  actor jsonb not null,
  created_at timestamptz not null,
  mutations jsonb not null,
  preview jsonb not null,
  base_revs jsonb not null,
  -- who closed it (applied, rejected or withdrew it), when, why (a rejection's reason), and what it recorded
  closed_by jsonb,
  closed_at timestamptz,
  reason text,
  change_ids jsonb
);
create index proposals_project on proposals (project_id, status, seq desc);
create index proposals_created on proposals (created_at);

-- A change made by applying a proposal names it and its author: {proposalId, actor}.
alter table changes add column proposal jsonb;
