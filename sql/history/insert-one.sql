-- $1 project_id text, $2..$7 the write's author as insert-many.sql binds it (user_id, user_name,
-- key_id, agent, via, request_id), $8..$16 its one change, each field a parameter of its own
-- (action, target kind, target id, target type, before jsonb, after jsonb, fields jsonb,
-- revert_of bigint, proposal jsonb; src/history/record.ts oneChangeParams). For a write of one
-- change (an add, an update, a leaf's delete): no JSON array to take apart into records
-- (bench/writes.md, the eleventh pass). Returns the change's id.
insert into changes (
  project_id, user_id, user_name, key_id, agent, via, request_id,
  action, target_kind, target_id, target_type, before, after, fields, revert_of, proposal
)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9::change_target_kind, $10, $11, $12::jsonb, $13::jsonb, $14::jsonb, $15::bigint, $16::jsonb)
returning id
