-- $1 owner_id text: serializes, until the transaction ends, the writes that count and add to
-- one owner's nodes (the free-tier cap): the count then sees every add committed before it
select pg_advisory_xact_lock(hashtext('node-cap:' || $1))
