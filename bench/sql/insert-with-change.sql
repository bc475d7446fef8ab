-- Kept for the benches that time it (bench/writes.md): the saving step's one statement for a
-- write's events and changes until the fourteenth pass, which split it into history's
-- (sql/history/insert-one.sql, insert-many.sql) and the events' (sql/events/insert-many.sql).
-- $1 project_id text, $2..$7 the write's author as sql/history/insert-many.sql binds it after the project
-- (user_id, user_name, key_id, agent, via, request_id), $8..$16 its one change, each field a parameter
-- of its own (action, target kind, target id, target type, before jsonb, after jsonb, fields jsonb,
-- revert_of bigint, proposal jsonb; history builds them, src/history/record.ts changeChunks), $17
-- events jsonb [{type, payload}] (as sql/events/insert-many.sql, at least one). insert-with-changes.sql
-- for a write of one change (an add, an update, a leaf's delete): no JSON array to take apart into
-- records (bench/README.md, the eleventh pass). Returns each event's seq, each row with the change's id.
with ch as (
  insert into changes (
    project_id, user_id, user_name, key_id, agent, via, request_id,
    action, target_kind, target_id, target_type, before, after, fields, revert_of, proposal
  )
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9::change_target_kind, $10, $11, $12::jsonb, $13::jsonb, $14::jsonb, $15::bigint, $16::jsonb)
  returning id
)
insert into events (project_id, type, payload)
select $1, e.v ->> 'type', e.v -> 'payload'
from jsonb_array_elements($17::jsonb) with ordinality as e(v, n)
order by e.n
returning seq, (select id from ch) as change_id
