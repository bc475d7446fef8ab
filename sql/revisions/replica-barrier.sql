-- $1 channel text, $2 payload text: say on $1 that this writer's commits so far are done (every
-- listener hears it after the notifications of those commits), and list the replicas that must
-- hear it: those whose lease is live, with the milliseconds it still runs
select pg_notify($1, $2) as sent,
  coalesce((
    select json_agg(json_build_array(id, ceil(extract(epoch from lease_until - now()) * 1000)))
    from replicas
    where lease_until > now()
  ), '[]') as live
