-- $1 limit int (events per project), $2 lease_until timestamptz, $3 claim int: one delivery per
-- (event, webhook) for the events of every project that has webhooks, past the project's cursor
-- in (txid, seq) order and only those of transactions older than every transaction still
-- running (as the /events feed reads them: a transaction still open may yet commit a smaller
-- seq). A webhook gets the events of the transactions after the one that registered it
-- (`since`), of the types it subscribes to (its `events`). A project without a cursor starts at
-- its first webhook. Moves each cursor forward, never back; safe to run twice at once (the
-- unique (webhook_id, event_seq) index: each delivery is made by one caller only).
-- The first $3 deliveries made are claimed by the caller as they are made (attempts 1, leased
-- until $2, as claim-due.sql would): a first attempt costs no claim of its own. The rest are
-- due at once, for claim-due.sql. Returns, on every row, how many events were read and
-- deliveries made and whether an event was held back (`held`), and the claimed deliveries with
-- what their attempt needs (as claim-due.sql returns them); one row with nulls when none was
-- claimed.
with projects as (
  -- each project with webhooks and where its fan-out starts: past its cursor, or without one
  -- every seq of the transactions after its first webhook's
  select w.project_id, coalesce(c.txid, min(w.since)) as txid, coalesce(c.seq, 9223372036854775807) as seq
  from webhooks w
  left join webhook_cursors c on c.project_id = w.project_id
  group by w.project_id, c.txid, c.seq
), horizon as (
  -- the oldest transaction still running: events of it and after may yet be joined by earlier seqs
  select pg_snapshot_xmin(pg_current_snapshot()) as xmin
), ev as (
  select e.project_id, e.seq, e.txid, e.type
  from projects p
  cross join horizon h
  cross join lateral (
    select e.project_id, e.seq, e.txid, e.type
    from events e
    -- one range of the (project_id, txid, seq) index (an "or" of the cursor's two cases read
    -- every event of the project)
    where e.project_id = p.project_id and (e.txid, e.seq) > (p.txid, p.seq) and e.txid < h.xmin
    order by e.txid, e.seq
    limit $1
  ) e
), held as (
  -- events committed past a project's start but held back by an older transaction still
  -- running: the caller fans out again soon (src/webhooks/delivery.ts), since no wake-up will
  -- come when that transaction ends
  select 1
  from projects p
  cross join horizon h
  where exists (
    select 1 from events e where e.project_id = p.project_id and (e.txid, e.seq) > (p.txid, p.seq) and e.txid >= h.xmin
  )
), fresh as (
  select w.id as webhook_id, ev.seq, row_number() over (order by ev.txid, ev.seq, w.id) as n
  from ev
  join webhooks w on w.project_id = ev.project_id and w.events @> to_jsonb(ev.type) and ev.txid > w.since
), made as (
  insert into webhook_deliveries (webhook_id, event_seq, attempts, next_attempt_at, created_at)
  select webhook_id, seq, case when n <= $3 then 1 else 0 end, case when n <= $3 then $2::timestamptz else now() end, now()
  from fresh
  order by n
  on conflict (webhook_id, event_seq) do nothing
  returning id, webhook_id, event_seq, attempts
), last as (
  select distinct on (project_id) project_id, txid, seq from ev order by project_id, txid desc, seq desc
), moved as (
  insert into webhook_cursors (project_id, txid, seq)
  select project_id, txid, seq from last
  on conflict (project_id) do update set txid = excluded.txid, seq = excluded.seq
  where (excluded.txid, excluded.seq) > (webhook_cursors.txid, webhook_cursors.seq)
  returning 1
)
select (select count(*) from ev)::int as events, (select count(*) from made)::int as made,
  exists (select 1 from held) as held, c.id, c.webhook_id, c.attempts, w.url, w.secret, e.type as event,
  e.payload::text as payload
from (select 1) as one
left join made c on c.attempts = 1
left join webhooks w on w.id = c.webhook_id
left join events e on e.seq = c.event_seq
order by c.event_seq
