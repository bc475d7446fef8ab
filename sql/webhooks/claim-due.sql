-- $1 now timestamptz, $2 lease_until timestamptz, $3 limit int: claims due attempts and returns
-- them with the webhook's current url and secret and the event payload (as text: the delivery
-- worker parses it, once per event). SKIP LOCKED lets
-- replicas claim side by side without waiting or taking the same row; the lease (next_attempt_at
-- moved to $2) keeps a claimed row from being claimed again while its attempt runs, and hands it
-- back if the process dies mid-attempt. attempts counts the claim itself. A new delivery is due
-- from its commit by the database clock, so an app clock lagging the server's never holds back
-- a first attempt.
with due as (
  select id from webhook_deliveries
  where status = 'pending' and next_attempt_at <= greatest($1::timestamptz, now())
  order by next_attempt_at, event_seq
  limit $3
  for update skip locked
), claimed as (
  update webhook_deliveries d
  set attempts = d.attempts + 1, next_attempt_at = $2
  from due
  where d.id = due.id
  returning d.id, d.webhook_id, d.event_seq, d.attempts
)
select c.id, c.webhook_id, c.attempts, w.url, w.secret, e.type as event, e.payload::text as payload
from claimed c
join webhooks w on w.id = c.webhook_id
join events e on e.seq = c.event_seq
order by c.event_seq
