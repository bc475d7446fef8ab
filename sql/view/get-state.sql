-- $1 project_id text, $2 view text: the view's state, or no row before any command or client
select view_mode, selected_iteration, expanded_nodes, focused_goals, selected_node, updated_at,
  last_applied, command_seq, last_client_seen
from view_states
where project_id = $1 and view = $2
