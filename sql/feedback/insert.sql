-- $1 id text, $2 user_id text, $3 agent_id text|null, $4 kind text, $5 summary text,
-- $6 details text|null, $7 context jsonb|null, $8 project_id text|null
-- $7 is JSON text cast here: postgres.js would encode a string sent as jsonb a second time
insert into feedback (id, user_id, agent_id, kind, summary, details, context, project_id)
values ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8)
returning id, created_at
