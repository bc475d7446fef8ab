-- $1 rows jsonb: [{project_id, id, data}]: the classifier's data for each claimed task, in one
-- statement. Returns the saved rows (their events are emitted from these).
update nodes n set data = r.data, classified_at = now(), updated_at = now()
from jsonb_to_recordset($1::jsonb) as r(project_id text, id text, data jsonb)
where n.project_id = r.project_id and n.id = r.id
returning n.project_id, n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
