-- $1 project_id text: advance the project's revision by one, in the caller's transaction (the
-- row stays locked until it ends, so concurrent writers of one project count one after another),
-- and mark it advanced in this transaction as advance_project_revision does (arbor.revised,
-- migration 0013), so the events' trigger at the commit does not advance it again; returns the
-- new revision
insert into project_revisions (project_id, revision)
values ($1, 1)
on conflict (project_id) do update set revision = project_revisions.revision + 1
returning revision::text as revision,
  set_config('arbor.revised', coalesce(current_setting('arbor.revised', true), '') || '/' || $1 || '/', true) as marked
