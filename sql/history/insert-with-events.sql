-- $1 project_id text, $2 user_id text|null, $3 user_name text|null, $4 key_id text|null, $5 agent text|null,
-- $6 via text, $7 request_id text, $8 changes jsonb (as sql/history/insert-many.sql), $9 events jsonb
-- [{type, payload}] (as sql/events/insert-many.sql). A write's changes and its events in one statement
-- (history.md, 7: recording costs no statement of its own); returns the changes' ids (event false)
-- and the events' seqs (event true).
with ch as (
  insert into changes (
    project_id, user_id, user_name, key_id, agent, via, request_id,
    action, target_kind, target_id, target_type, before, after, fields, revert_of, proposal
  )
  select $1, $2, $3, $4, $5, $6, $7,
    c.action, c.kind, c.id, c.type, nullif(c.before, 'null'), nullif(c.after, 'null'), c.fields, c."revertOf", c.proposal
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
