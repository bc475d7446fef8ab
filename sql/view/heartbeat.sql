-- $1 project_id text, $2 now timestamptz: a client is connected
insert into view_states (project_id, last_client_seen) values ($1, $2)
on conflict (project_id) do update set last_client_seen = $2
