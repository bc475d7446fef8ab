-- Kept for the benches that time it (bench/writes.md): the saving step's one statement for a
-- write's events and changes until the fourteenth pass, which split it into history's
-- (sql/history/insert-one.sql, insert-many.sql) and the events' (sql/events/insert-many.sql).
-- $1 project_id text, $2..$8 the changes of a write as sql/history/insert-many.sql binds them after the
-- project (user_id, user_name, key_id, agent, via, request_id, changes jsonb; history builds them,
-- src/history/record.ts changeChunks), $9 events jsonb [{type, payload}] (as sql/events/insert-many.sql).
-- A write's events and its changes in one statement (history.md, 7: recording costs no statement of
-- its own); returns the changes' ids (event false) and the events' seqs (event true).
with ch as (
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
), ev as (
  insert into events (project_id, type, payload)
  select $1, e.v ->> 'type', e.v -> 'payload'
  from jsonb_array_elements($9::jsonb) with ordinality as e(v, n)
  order by e.n
  returning seq
)
select false as event, id from ch
union all
select true as event, seq as id from ev
