-- $1 project_id text, $2 embedder text: every node of the project has vectors from this embedder
insert into search_backfill (project_id, embedder)
values ($1, $2)
on conflict (project_id, embedder) do update set completed_at = now()
