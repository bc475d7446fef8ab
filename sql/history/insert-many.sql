-- $1 project_id text, $2 user_id text|null, $3 user_name text|null, $4 key_id text|null, $5 agent text|null,
-- $6 via text, $7 request_id text, $8 changes jsonb: [{action, kind, id, type, before, after, fields, revertOf, proposal}],
-- in order; returns their ids. One statement for every change of a write (history.md, 7: cheap).
insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields, revert_of, proposal
)
select $1, $2, $3, $4, $5, $6, $7,
  c.action, c.kind::change_target_kind, c.id, c.type, nullif(c.before, 'null'), nullif(c.after, 'null'), c.fields, c."revertOf", c.proposal
from rows from (
  jsonb_to_recordset($8::jsonb) as (action text, kind text, id text, type text, before jsonb, after jsonb, fields jsonb, "revertOf" bigint, proposal jsonb)
) with ordinality as c(action, kind, id, type, before, after, fields, "revertOf", proposal, n)
order by c.n
returning id
