-- $1 rows jsonb: [{project_id, id, data}]: the classifier's data for each claimed task, in one
-- statement. Returns the saved rows (their events are emitted from these).
-- rev and field_revs as sql/nodes/update.sql sets them, a rev of its own for each row (migration 0040)
-- Each row joined to its node by the primary key, as sql/nodes/delete-many.sql joins its ids:
-- joined to the function alone (which the planner counts as 100 rows) it hashed them against a
-- sequential scan of every project's nodes. A limit of the array's length (which cuts nothing)
-- counts as a tenth of its input, so two make the rows look like one, and the planner probes the
-- key for each even on a table of a few hundred nodes no analyze has seen (one limit, ten rows:
-- a sequential scan there). bench/writes.md "Twelfth pass: the last lists of ids".
update nodes n set data = r.data, classified_at = now(), updated_at = now(),
  rev = case when n.data is distinct from r.data then nextval('target_revs') else n.rev end,
  field_revs = n.field_revs || coalesce((
    select jsonb_object_agg(k, currval('target_revs'))
    from jsonb_object_keys(n.data || r.data) k
    where (n.data -> k) is distinct from (r.data -> k)), '{}')
from (
  select * from (
    select * from jsonb_to_recordset((select $1::jsonb)) as r(project_id text, id text, data jsonb)
    limit (select jsonb_array_length($1::jsonb))
  ) as r
  limit (select jsonb_array_length($1::jsonb))
) as r
where n.project_id = r.project_id and n.id = r.id
returning n.project_id, n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
