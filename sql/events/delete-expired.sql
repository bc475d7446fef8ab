-- $1 before timestamptz: events older than the retention window, unless a webhook delivery of
-- theirs is still pending (after a long outage the retries still have their payload). Finished
-- deliveries go with their event. Returns how many were deleted.
with gone as (
  delete from events e
  where e.created_at < $1
    and not exists (select 1 from webhook_deliveries d where d.event_seq = e.seq and d.status = 'pending')
  returning 1
)
select count(*)::int as count from gone
