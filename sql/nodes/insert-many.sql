-- $1 project_id text, $2 rows jsonb: [{id, type, parent_id, data, created_at|null, classified}]
-- One statement for any number of nodes, inserted in the order given. Returns each node's id and
-- the rev it was stored with: the rest the writer sent (src/nodes/write.ts `flush`), so nothing
-- of it is encoded, sent back and decoded again. The type is cast to the domain node_type, which
-- holds the rule the table's check held before migration 0045 (planned once, not every statement).
insert into nodes (project_id, id, type, parent_id, data, created_at, classified_at)
select $1, e.v ->> 'id', (e.v ->> 'type')::node_type, e.v ->> 'parent_id', e.v -> 'data',
  coalesce((e.v ->> 'created_at')::timestamptz, now()),
  case when (e.v ->> 'classified')::boolean then now() end
from jsonb_array_elements($2::jsonb) with ordinality as e(v, n)
order by e.n
returning id, rev
