-- A per-project counter that every committed change of what a project's reads return advances,
-- in the change's own transaction (src/revisions/). Cached reads (src/reads/) are keyed by it: on
-- PostgreSQL each cached read checks it with one primary-key lookup, so a replica never answers
-- from before a write that another replica has already acknowledged. A project without a row
-- has revision 0 (no change since this migration).
create table project_revisions (
  project_id text primary key references projects (id) on delete cascade,
  revision bigint not null
);

-- Every write with events (the outbox, src/events/outbox.ts) advances it once per project, when
-- the transaction commits: a deferred trigger, so the counter's row is locked only for the
-- commit itself and a transaction that stays open (a long import, an agent's slow write) never
-- holds back another writer of the project. The transaction-local setting arbor.revised lists
-- the projects already advanced, so a 1,000-event batch updates the row once.
create function advance_project_revision() returns trigger
language plpgsql as $$
declare
  done text := coalesce(current_setting('arbor.revised', true), '');
  mark text := '/' || new.project_id || '/';
begin
  if position(mark in done) > 0 then
    return null;
  end if;
  insert into project_revisions (project_id, revision) values (new.project_id, 1)
  on conflict (project_id) do update set revision = project_revisions.revision + 1;
  perform set_config('arbor.revised', done || mark, true);
  return null;
end
$$;

create constraint trigger events_advance_revision
after insert on events
deferrable initially deferred
for each row execute function advance_project_revision();
