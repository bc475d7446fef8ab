-- $1 project_id text, $2 id text, $3 url text|null, $4 events jsonb|null, $5 secret text|null:
-- null keeps the current value
update webhooks set
  url = coalesce($3, url),
  events = coalesce($4::jsonb, events),
  secret = coalesce($5, secret)
where project_id = $1 and id = $2
returning id, url, events, secret, created_at, last_delivery_at, last_status, last_error
