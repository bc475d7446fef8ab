-- $1 owner_id text: serializes, until the transaction ends, the project creations of one owner
-- (the plan's project limit): the count then sees every project committed before it
select pg_advisory_xact_lock(hashtext('project-cap:' || $1))
