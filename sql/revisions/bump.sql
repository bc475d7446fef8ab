-- $1 project_id text: advance the project's revision by one, in the caller's transaction (the
-- row stays locked until it ends, so concurrent writers of one project count one after another);
-- returns the new revision
insert into project_revisions (project_id, revision)
values ($1, 1)
on conflict (project_id) do update set revision = project_revisions.revision + 1
returning revision::text as revision
