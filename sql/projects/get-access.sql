-- $1 project_id text, $2 user_id text: the project, its owner's plan, and the user's role (null: none);
-- importing: an import still writes it (migration 0029), and nobody else may see it
select p.id, p.name, p.archived, p.owner_id,
  o.tier as owner_tier, o.lapsed as owner_lapsed, o.contributor as owner_contributor,
  case when p.owner_id = $2 then 'owner' when m.user_id is not null then 'member' end as role,
  p.import_lease is not null as importing
from projects p
join users o on o.id = p.owner_id
left join project_members m on m.project_id = p.id and m.user_id = $2
where p.id = $1
