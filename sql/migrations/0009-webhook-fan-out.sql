-- Webhook deliveries leave the write path. A trigger on `events` wrote one delivery row per
-- subscribed webhook inside every write's transaction (10 webhooks: 10 rows and their indexes
-- on each write). Now the delivery loop fans the outbox out itself, right after the commit wakes
-- it: per project, from a cursor, in the order the /events feed reads (txid, seq) and only up to
-- the oldest transaction still running, so an event committed late is never skipped. The unique
-- index makes a fan-out repeated by a restart or a second replica a no-op.
drop trigger events_enqueue_webhook_deliveries on events;
drop function arbor_enqueue_webhook_deliveries();

-- the transaction that registered a webhook: it gets the events of later transactions (ids, not
-- clocks: the app's and the database's clocks may disagree)
alter table webhooks add column since xid8 not null default pg_current_xact_id();

create unique index webhook_deliveries_once on webhook_deliveries (webhook_id, event_seq);
drop index webhook_deliveries_webhook;

create table webhook_cursors (
  project_id text primary key references projects (id) on delete cascade,
  txid xid8 not null,
  seq bigint not null
);

-- projects that have webhooks already: the trigger fanned their events out so far
insert into webhook_cursors (project_id, txid, seq)
select distinct on (e.project_id) e.project_id, e.txid, e.seq
from events e
where e.project_id in (select project_id from webhooks)
order by e.project_id, e.txid desc, e.seq desc;
