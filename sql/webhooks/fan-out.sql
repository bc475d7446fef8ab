-- $1 limit int (events per project): one delivery per (event, webhook) for the events of every
-- project that has webhooks, past the project's cursor in (txid, seq) order and only those of
-- transactions older than every transaction still running (as the /events feed reads them: a
-- transaction still open may yet commit a smaller seq). A webhook gets the events of the
-- transactions after the one that registered it (`since`), of the types it subscribes to (its
-- `events`). A project without a cursor starts at its first webhook. Moves each cursor forward, never back; safe to
-- run twice at once (the unique (webhook_id, event_seq) index). Returns how many events were read
-- and how many deliveries were made.
with projects as (
  select project_id, min(since) as since from webhooks group by project_id
), ev as (
  select e.project_id, e.seq, e.txid, e.type
  from projects p
  left join webhook_cursors c on c.project_id = p.project_id
  cross join lateral (
    select e.project_id, e.seq, e.txid, e.type
    from events e
    where e.project_id = p.project_id
      and ((c.project_id is null and e.txid > p.since) or (e.txid, e.seq) > (c.txid, c.seq))
      and e.txid < pg_snapshot_xmin(pg_current_snapshot())
    order by e.txid, e.seq
    limit $1
  ) e
), made as (
  insert into webhook_deliveries (webhook_id, event_seq, next_attempt_at, created_at)
  select w.id, ev.seq, now(), now()
  from ev
  join webhooks w on w.project_id = ev.project_id and w.events @> to_jsonb(ev.type) and ev.txid > w.since
  order by ev.txid, ev.seq
  on conflict (webhook_id, event_seq) do nothing
  returning 1
), last as (
  select distinct on (project_id) project_id, txid, seq from ev order by project_id, txid desc, seq desc
), moved as (
  insert into webhook_cursors (project_id, txid, seq)
  select project_id, txid, seq from last
  on conflict (project_id) do update set txid = excluded.txid, seq = excluded.seq
  where (excluded.txid, excluded.seq) > (webhook_cursors.txid, webhook_cursors.seq)
  returning 1
)
select (select count(*) from ev)::int as events, (select count(*) from made)::int as made, (select count(*) from moved)::int as moved
