-- $1 project_id text, $2 rows jsonb: [{id, type, parent_id, data, created_at|null, classified}]
-- One statement for any number of nodes, inserted in the order given. Returns each node's id and
-- the rev it was stored with: the rest the writer sent (src/nodes/write.ts `flush`), so nothing
-- of it is encoded, sent back and decoded again. The type is cast to the domain node_type, which
-- holds the rule the table's check held before migration 0045 (planned once, not every statement).
-- Each row's rev is taken from target_revs here, in the order given, with its field_revs
-- ({"*": rev}, as migration 0020's trigger sets them, which a row set here skips: 0056).
insert into nodes (project_id, id, type, parent_id, data, created_at, classified_at, rev, field_revs)
select $1, e.v ->> 'id', (e.v ->> 'type')::node_type, e.v ->> 'parent_id', e.v -> 'data',
  coalesce((e.v ->> 'created_at')::timestamptz, now()),
  case when (e.v ->> 'classified')::boolean then now() end,
  e.rev, jsonb_build_object('*', e.rev)
from (
  select x.v, x.n, nextval('target_revs') as rev
  from jsonb_array_elements($2::jsonb) with ordinality as x(v, n)
) e
order by e.n
returning id, rev
