-- $1 project_id text, $2..$7 the write's author as insert-many.sql binds it (user_id, user_name,
-- key_id, agent, via, request_id), $8 changes jsonb: [{id, type, after, fields, proposal}], in
-- order, each a node's add (src/history/record.ts `addParams`); returns their ids. The action, the
-- target kind and the empty `before` of an add are the statement's, not the JSON's: three keys a
-- row fewer to parse and take apart, the kind's domain check once (bench/writes.md, "Seventeenth
-- pass: history's share of the batch on PostgreSQL"). Stores what insert-many.sql stores for them.
insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields, proposal
)
select $1, $2, $3, $4, $5, $6, $7, 'add', 'node'::change_target_kind, c.id, c.type, null, c.after, c.fields, c.proposal
from rows from (
  jsonb_to_recordset($8::jsonb) as (id text, type text, after jsonb, fields jsonb, proposal jsonb)
) with ordinality as c(id, type, after, fields, proposal, n)
order by c.n
returning id
