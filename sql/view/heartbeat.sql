-- $1 project_id text, $2 now timestamptz, $3 view text: a client of the view is connected. A
-- heartbeat less than 5 s after the last one changes nothing and writes nothing (every open page
-- polls; the window is 30 s).
insert into view_states (project_id, view, last_client_seen) values ($1, $3, $2)
on conflict (project_id, view) do update set last_client_seen = $2
where view_states.last_client_seen is null or view_states.last_client_seen < $2::timestamptz - interval '5 seconds'
