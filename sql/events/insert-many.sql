-- $1 project_id text, $2 events jsonb: [{type, payload}], in order; returns their seqs, in order. Written in the same
-- transaction as the change it describes (outbox): nothing is lost if the process dies.
insert into events (project_id, type, payload)
select $1, e.v ->> 'type', e.v -> 'payload'
from jsonb_array_elements($2::jsonb) with ordinality as e(v, n)
order by e.n
returning seq
