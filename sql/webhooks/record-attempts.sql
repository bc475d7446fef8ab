-- $1 outcomes jsonb: [{n, id, attempts, status, http_status, error, attempted_at, next_attempt_at}],
-- n counting up in the order the attempts finished. Writes the outcome of each attempt, and each
-- webhook's health (lastDeliveryAt, lastStatus, lastError) from its attempt that finished last.
-- Only the holder of a claim (same attempts count) may write its outcome, and an older attempt
-- finishing late does not overwrite a newer health.
with outcome as (
  select * from jsonb_to_recordset($1::jsonb) as o(n int, id text, attempts int, status text,
    http_status int, error text, attempted_at timestamptz, next_attempt_at timestamptz)
), attempt as (
  update webhook_deliveries d set
    status = o.status, last_status = o.http_status, last_error = o.error,
    last_attempt_at = o.attempted_at, next_attempt_at = o.next_attempt_at
  from outcome o
  -- the ids as an array too: the planner then looks the rows up by primary key, whatever it
  -- assumes of the outcomes' count (joined alone, it hashed them against a scan of the table)
  where d.id = any(array(select id from outcome)) and d.id = o.id and d.attempts = o.attempts
  returning d.webhook_id, o.n, o.attempted_at, o.http_status, o.error
), latest as (
  select distinct on (webhook_id) webhook_id, attempted_at, http_status, error
  from attempt
  order by webhook_id, n desc
)
update webhooks w set last_delivery_at = l.attempted_at, last_status = l.http_status, last_error = l.error
from latest l
where w.id = l.webhook_id and (w.last_delivery_at is null or w.last_delivery_at <= l.attempted_at)
