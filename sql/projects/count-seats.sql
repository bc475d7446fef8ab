-- $1 owner_id text, $2 candidate user_id text: distinct people across the owner's projects,
-- owner included, if the candidate joined one more of them
select count(*)::int as count from (
  select $1::text as user_id
  union
  select m.user_id from project_members m join projects p on p.id = m.project_id where p.owner_id = $1
  union
  select $2::text
) seats
