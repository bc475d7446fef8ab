-- $1 project_id text, $2 user_id text
insert into project_members (project_id, user_id)
values ($1, $2)
on conflict do nothing
returning user_id
