-- $1 id text: revocation is immediate, every lookup filters on revoked_at
update api_keys set revoked_at = now()
where id = $1 and revoked_at is null
returning id
