-- $1 project_id text, $2 now timestamptz, $3 applied_id bigint|null, $4 applied_type text|null,
-- $5 view_mode text, $6 selected_iteration text|null, $7 expanded_nodes jsonb,
-- $8 focused_goals jsonb, $9 selected_node text|null, $10 view text: what a client of the view shows now, and the last
-- command it applied (older reports never move the applied id back)
insert into view_states (project_id, view, last_client_seen) values ($1, $10, $2)
on conflict (project_id, view) do update set
  last_client_seen = $2,
  updated_at = $2,
  view_mode = $5,
  selected_iteration = $6,
  expanded_nodes = $7::jsonb,
  focused_goals = $8::jsonb,
  selected_node = $9,
  last_applied = case when $3::bigint > view_states.command_seq
    then jsonb_build_object('id', $3::bigint, 'type', $4::text, 'at', $2) else view_states.last_applied end,
  command_seq = greatest(view_states.command_seq, coalesce($3::bigint, 0))
