-- A project that POST /import-okf is still writing (issue 50, 3). An import of 15,000 tasks in
-- one transaction held PGlite's one session for seconds and every other tenant with it; it now
-- writes in chunks, each a short transaction of its own, into a project nobody sees until the
-- last chunk commits. import_lease is set while it writes (null: an ordinary project): such a
-- project is left out of every listing and refused to every request but the import's own, and
-- one whose lease ran out (its process died, or on PGlite any at start-up: one process) is
-- removed with all it holds (src/projects/importing.ts). Each chunk moves the lease on.
alter table projects add column import_lease timestamptz;
create index projects_importing on projects (import_lease) where import_lease is not null;
