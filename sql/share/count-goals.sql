-- $1 project_id text, $2 ids jsonb (a string array): how many of them are goals of the project
-- Each id is a lateral probe of the primary key (offset 0 keeps it as written), as
-- sql/nodes/get-many.sql finds its ids: as `id in (select jsonb_array_elements_text($2))` the plan
-- read every goal of the project (every node of it by nodes_order, or the whole table once
-- analyzed) and matched the ids against them (bench/writes.md "Twelfth pass: the last lists of ids").
select count(*)::int as count
from (select distinct $1::text as project_id, jsonb_array_elements_text((select $2::jsonb)) as id) as k
cross join lateral (
  select 1
  from nodes n
  where n.project_id = k.project_id and n.id = k.id and n.type = 'goal'
  offset 0
) as g
