-- $1 project_id text, $2 webhook_id text, $3 limit int: newest event first
select d.id, e.type as event, d.status, d.attempts, d.last_status, d.last_error,
  d.last_attempt_at, d.next_attempt_at, d.created_at
from webhook_deliveries d
join webhooks w on w.id = d.webhook_id
join events e on e.seq = d.event_seq
where w.project_id = $1 and d.webhook_id = $2
order by d.event_seq desc
limit $3
