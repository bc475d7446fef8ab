-- $1 project_id text: oldest first, the order they were registered in
select id, url, events, created_at, last_delivery_at, last_status, last_error
from webhooks
where project_id = $1
order by created_at, seq
