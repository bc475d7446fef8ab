-- $1 user_id text, $2 include_archived boolean: owned projects first, then member projects
select id, name, archived, role from (
  select p.id, p.name, p.archived, 'owner' as role, 0 as rank, p.created_at
  from projects p
  where p.owner_id = $1
  union all
  select p.id, p.name, p.archived, 'member' as role, 1 as rank, p.created_at
  from project_members m
  join projects p on p.id = m.project_id
  where m.user_id = $1 and p.owner_id <> $1
) all_projects
where $2 or not archived
order by rank, created_at, id
