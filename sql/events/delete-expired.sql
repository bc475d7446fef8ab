-- $1 before timestamptz: events older than the retention window, unless a webhook delivery of
-- theirs is still pending (after a long outage the retries still have their payload) or they are
-- not fanned out into deliveries yet (a project with webhooks, past its webhook cursor). Finished
-- deliveries go with their event. Returns how many were deleted.
with gone as (
  delete from events e
  where e.created_at < $1
    and not exists (select 1 from webhook_deliveries d where d.event_seq = e.seq and d.status = 'pending')
    and not exists (
      select 1 from webhooks w
      left join webhook_cursors c on c.project_id = w.project_id
      where w.project_id = e.project_id and (c.project_id is null or (e.txid, e.seq) > (c.txid, c.seq))
    )
  returning 1
)
select count(*)::int as count from gone
