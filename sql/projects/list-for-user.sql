-- $1 user_id text, $2 include_archived boolean, $3 team_owned_only boolean: owned projects first,
-- then member projects. With $3 only member projects whose owner is on team: all that a key
-- without API access of its own (strategist, contributor) may use. A project an import still
-- writes (migration 0029) is listed once the import is done.
select id, name, archived, role from (
  select p.id, p.name, p.archived, 'owner' as role, 0 as rank, p.created_at
  from projects p
  where p.owner_id = $1 and not $3::boolean and p.import_lease is null
  union all
  select p.id, p.name, p.archived, 'member' as role, 1 as rank, p.created_at
  from project_members m
  join projects p on p.id = m.project_id
  join users o on o.id = p.owner_id
  where m.user_id = $1 and p.owner_id <> $1 and p.import_lease is null
    and (not $3::boolean or (o.tier = 'team' and not o.lapsed and not o.contributor))
) all_projects
where $2 or not archived
order by rank, created_at, id
