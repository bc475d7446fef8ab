-- $1 project_id text: every project starts with the system iteration Later
insert into iterations (project_id, name, status, system, sort_order)
values ($1, 'Later', 'active', true, 0)
returning name, status, system
