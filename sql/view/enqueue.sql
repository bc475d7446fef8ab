-- $1 project_id text, $2 command jsonb, $3 now timestamptz, $4 view text: the command's id is the
-- view's next number, taken with the state row locked so concurrent enqueues never share one
with s as (
  insert into view_states (project_id, view, enqueued_seq) values ($1, $4, 1)
  on conflict (project_id, view) do update set enqueued_seq = view_states.enqueued_seq + 1
  returning enqueued_seq
)
insert into view_commands (project_id, view, seq, command, created_at)
select $1, $4, enqueued_seq, $2::jsonb, $3 from s
returning seq
