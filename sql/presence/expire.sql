-- $1 now: delete every presence that has run out and return it (once: a second replica deleting
-- at the same time waits for the row and then finds it gone).
delete from presence
where expires_at <= $1
returning project_id, user_id, user_name, agent, via, node_id, field, note
