-- $1 name text, $2 holder text, $3 ttl_ms integer: take the lease `name` for `holder`, or
-- renew it, when it is free, expired or already `holder`'s, for $3 ms from now. Returns a row
-- only when `holder` holds it afterwards.
insert into leases (name, holder, expires_at)
values ($1, $2, now() + $3::integer * interval '1 millisecond')
on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
where leases.holder = excluded.holder or leases.expires_at < now()
returning holder
