-- $1 project_id text
select count(*)::int as count from webhooks where project_id = $1
