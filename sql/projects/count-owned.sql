-- $1 owner_id text: archived projects count too, archiving is only a listing filter
select count(*)::int as count from projects where owner_id = $1
