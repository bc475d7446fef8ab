-- $1 project_id text, $2 name text: the iteration, its row locked until the transaction ends (a
-- write with ifRev: two such writes of one iteration check their revs one after the other)
select name, status, system, sort_order, git_tags, completed_at, rev, field_revs
from iterations
where project_id = $1 and name = $2
for update
