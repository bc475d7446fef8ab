-- A per-project counter that every committed change of what a project's reads return advances,
-- in the change's own transaction (src/events/revision.ts). Cached reads (src/reads/) are keyed
-- by it: on PostgreSQL each cached read checks it with one primary-key lookup, so a replica
-- never answers from before a write that another replica has already acknowledged. A project
-- without a row has revision 0 (no change since this migration).
create table project_revisions (
  project_id text primary key references projects (id) on delete cascade,
  revision bigint not null
);
