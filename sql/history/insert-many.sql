-- $1 project_id text, $2 user_id text|null, $3 user_name text|null, $4 key_id text|null, $5 agent text|null,
-- $6 via text, $7 request_id text, $8 changes jsonb: [{action, kind, id, type, before, after, fields, revertOf}],
-- in order; returns their ids. One statement for every change of a write (history.md, 7: cheap).
insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields, revert_of
)
select $1, $2, $3, $4, $5, $6, $7,
  c.v ->> 'action', c.v ->> 'kind', c.v ->> 'id', c.v ->> 'type',
  nullif(c.v -> 'before', 'null'::jsonb), nullif(c.v -> 'after', 'null'::jsonb), c.v -> 'fields',
  (c.v ->> 'revertOf')::bigint
from jsonb_array_elements($8::jsonb) with ordinality as c(v, n)
order by c.n
returning id
