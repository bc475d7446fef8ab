-- $1 project_id text, $2 id text: its pending deliveries go with it
delete from webhooks where project_id = $1 and id = $2 returning id
