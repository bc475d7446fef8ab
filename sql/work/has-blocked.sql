-- $1 project_id text: whether the project has open work that is blocked
select exists (select 1 from work_items where project_id = $1 and open and blocked) as blocked
