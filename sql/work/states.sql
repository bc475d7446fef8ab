-- $1 project_id text, $2 node_ids text[]: whether each of these work items is open and blocked
-- (a node without a row is not a work item)
-- Each node is a lateral probe of the primary key (sql/nodes/get-many.sql says why): as
-- `node_id = any($2)` the generic plan read the project's work items and filtered on the nodes.
select w.node_id, w.open, w.blocked
from (select distinct $1::text as project_id, unnest((select $2::text[])) as node_id) as k
cross join lateral (
  select r.node_id, r.open, r.blocked
  from work_items r
  where r.project_id = k.project_id and r.node_id = k.node_id
  offset 0
) w
