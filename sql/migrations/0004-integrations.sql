-- Integrations: webhooks and their deliveries, share links, and the order the pull feed reads
-- the outbox in. Deliveries are written by a trigger on `events`, so they land in the same
-- transaction as the change itself without the tree code knowing about webhooks.

-- A bigserial is handed out at insert time but rows become visible at commit, so a later seq
-- can commit first and a poller paging by seq alone would skip the earlier one for good. The
-- feed pages by (txid, seq) and only up to the oldest transaction still running, where the
-- order can no longer change.
alter table events add column txid xid8 not null default pg_current_xact_id();
create index events_feed on events (project_id, txid, seq);

create table webhooks (
  id text primary key,
  -- registration order within one timestamp
  seq bigserial not null,
  project_id text not null references projects (id) on delete cascade,
  url text not null,
  -- event names, a json array; the trigger below tests membership with @>
  events jsonb not null,
  -- `whsec_` + base64: a Standard Webhooks secret, also the X-Arbor-Signature key as UTF-8
  secret text not null,
  created_at timestamptz not null default now(),
  last_delivery_at timestamptz,
  last_status integer,
  last_error text
);
create index webhooks_project on webhooks (project_id, created_at);

-- One row per (event, webhook). Its id is the X-Arbor-Delivery / webhook-id header, the same on
-- every attempt. A claim moves next_attempt_at forward (a lease), so a replica that dies
-- mid-attempt leaves the row to be retried, and two replicas never hold it at once.
create table webhook_deliveries (
  id text primary key default ('msg_' || replace(gen_random_uuid()::text, '-', '')),
  webhook_id text not null references webhooks (id) on delete cascade,
  event_seq bigint not null references events (seq) on delete cascade,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_attempt_at timestamptz,
  last_status integer,
  last_error text,
  created_at timestamptz not null default now()
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_webhook on webhook_deliveries (webhook_id, event_seq desc);
create index webhook_deliveries_event on webhook_deliveries (event_seq);

create function arbor_enqueue_webhook_deliveries() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (webhook_id, event_seq, next_attempt_at, created_at)
  select w.id, new.seq, new.created_at, new.created_at
  from webhooks w
  where w.project_id = new.project_id and w.events @> to_jsonb(new.type);
  return null;
end
$$;

create trigger events_enqueue_webhook_deliveries after insert on events
  for each row execute function arbor_enqueue_webhook_deliveries();

-- Share links. The token is listed back to owners and members (api.md), so it is kept as is;
-- it carries 192 random bits. `active` is cleared by revocation and by the expiry loop; reads
-- also compare expires_at, so an expired link is dead before the loop gets to it.
create table share_tokens (
  seq bigserial not null,
  token text primary key,
  project_id text not null references projects (id) on delete cascade,
  created_by text references users (id) on delete set null,
  settings jsonb not null default '{}',
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  active boolean not null default true
);
create index share_tokens_project on share_tokens (project_id, created_at desc, seq desc);
create index share_tokens_expiring on share_tokens (expires_at) where active and expires_at is not null;
