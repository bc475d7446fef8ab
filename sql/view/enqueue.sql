-- $1 project_id text, $2 command jsonb, $3 now timestamptz: the command's id is the project's
-- next number, taken with the state row locked so concurrent enqueues never share one
with s as (
  insert into view_states (project_id, enqueued_seq) values ($1, 1)
  on conflict (project_id) do update set enqueued_seq = view_states.enqueued_seq + 1
  returning enqueued_seq
)
insert into view_commands (project_id, seq, command, created_at)
select $1, enqueued_seq, $2::jsonb, $3 from s
returning seq
