-- $1 before timestamptz: changes older than the HISTORY_DAYS window go; returns how many. Project
-- by project along the key (project_id, id) (migration 0040): the projects that have changes found
-- by skipping from one to the next on the key, then each one's cut, its first id at or after the
-- window (ids grow with time), found from its oldest (the rows walked past are the ones deleted
-- anyway); no index on `at` to keep up per write.
with recursive projects_with_changes as (
  (select project_id from changes order by project_id limit 1)
  union all
  select (select c.project_id from changes c where c.project_id > p.project_id order by c.project_id limit 1)
  from projects_with_changes p
  where p.project_id is not null
), cut as (
  select p.project_id,
    coalesce((select min(c.id) from changes c where c.project_id = p.project_id and c.at >= $1), 9223372036854775807) as first_kept
  from projects_with_changes p
  where p.project_id is not null
), gone as (
  delete from changes c
  using cut
  where c.project_id = cut.project_id and c.id < cut.first_kept
  returning 1
)
select count(*)::int as count from gone
