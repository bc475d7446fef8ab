-- $1 key_hash text: records a use at most once a minute per key, whatever the number of replicas
update api_keys set last_used_at = now()
where key_hash = $1 and revoked_at is null
  and (last_used_at is null or last_used_at < now() - interval '1 minute')
