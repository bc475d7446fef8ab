-- $1 id text, $2 project_id text, $3 url text, $4 events jsonb (a json array, as text),
-- $5 secret text, $6 created_at timestamptz
insert into webhooks (id, project_id, url, events, secret, created_at)
values ($1, $2, $3, $4::jsonb, $5, $6)
returning id, url, events, secret, created_at, last_delivery_at, last_status, last_error
