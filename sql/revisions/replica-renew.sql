-- $1 id text, $2 lease_ms int: take or renew this replica's lease until now + $2 ms
insert into replicas (id, lease_until)
values ($1, now() + make_interval(secs => $2::float8 / 1000))
on conflict (id) do update set lease_until = excluded.lease_until
