-- $1 project_id text, $2 ids text[]: those of the project's nodes, in no order
-- Each id is a lateral probe of the primary key (offset 0 keeps it as written). As `project_id =
-- $1 and id = any($2)` the generic plan a prepared statement keeps after five runs read every node
-- of the project and filtered on the ids whenever the project looked small to it (a table no
-- analyze had seen, thousands of small projects: it costs an array parameter as ten probes), and
-- with good statistics the plan cache planned the statement again on every run. The array is read
-- through a sub-select, which hides its length from the custom plans too: they cost what the
-- generic plan does, and the plan cache keeps the generic one. The project is a column of the ids'
-- rows rather than $1, so no plan weighs it by its statistics (a project made since the last
-- analyze looks empty, and scanning it for each id looked cheaper than the key).
-- bench/writes.md "Twelfth pass: the other lists of ids".
select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev
from (select distinct $1::text as project_id, unnest((select $2::text[])) as id) as k
cross join lateral (
  select r.id, r.type, r.parent_id, r.data, r.created_at, r.rev
  from nodes r
  where r.project_id = k.project_id and r.id = k.id
  offset 0
) n
