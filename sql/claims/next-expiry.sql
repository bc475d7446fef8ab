-- $1 project_id text, $2 now timestamptz: the earliest expiry among the project's claims live at
-- $2 (null when none is): an answer that shows claims is kept no longer than that
select min(expires_at) as expires_at
from claims
where project_id = $1 and expires_at > $2
