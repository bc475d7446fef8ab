-- $1 project_ids text[]: of these projects, those whose work lock (the key of sql/work/lock-project.sql)
-- this transaction now holds, each tried without waiting: a lock held by another write is left to it
select coalesce(array_agg(p), '{}') as locked
from unnest($1::text[]) p
where pg_try_advisory_xact_lock(hashtextextended('arbor.unblock:' || p, 0))
