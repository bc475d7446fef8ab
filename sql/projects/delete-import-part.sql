-- $1 project_id text, $2 per_table int: a part of what a never-finished import wrote, at most $2
-- rows of each big table (its changes and its events, which have no foreign key (0056); its nodes, leaves
-- first, so a delete's cascade stays within the part), so each part is one short transaction on
-- PGlite's one session. Only while the project is still importing. removed: 0 when nothing is left.
with importing as (
  select 1 from projects where id = $1 and import_lease is not null
), changes_gone as (
  delete from changes where project_id = $1 and id in (
    select id from changes where project_id = $1 and exists (select 1 from importing) limit $2
  )
  returning 1
), events_gone as (
  delete from events where seq in (
    select seq from events where project_id = $1 and exists (select 1 from importing) limit $2
  )
  returning 1
), nodes_gone as (
  delete from nodes where project_id = $1 and id in (
    select c.id from nodes c
    where c.project_id = $1 and exists (select 1 from importing)
      and not exists (select 1 from nodes k where k.project_id = $1 and k.parent_id = c.id)
    limit $2
  )
  returning 1
)
select ((select count(*) from changes_gone) + (select count(*) from events_gone) + (select count(*) from nodes_gone))::int as removed
