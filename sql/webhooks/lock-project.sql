-- $1 project_id text: holds the project row until commit, so two registrations racing for the
-- last of the 10 slots take turns
select id from projects where id = $1 for update
