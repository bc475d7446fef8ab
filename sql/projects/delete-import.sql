-- $1 project_id text: the project of a never-finished import, once its big tables are empty
-- (delete-import-part.sql); what is left of it (iterations, counters, work state) goes with it
delete from projects where id = $1 and import_lease is not null
returning id
