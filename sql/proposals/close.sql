-- $1 project_id text, $2 id text, $3 status text, $4 closed_by jsonb, $5 closed_at timestamptz,
-- $6 reason text|null, $7 change_ids jsonb|null: an open proposal applied, rejected or withdrawn
update proposals
set status = $3, closed_by = $4::jsonb, closed_at = $5, reason = $6, change_ids = $7::jsonb
where project_id = $1 and id = $2 and status = 'open'
returning *
