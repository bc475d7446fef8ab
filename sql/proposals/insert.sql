-- $1 id text, $2 project_id text, $3 title text, $4 note text|null, $5 actor jsonb, $6 created_at
-- timestamptz, $7 mutations jsonb, $8 preview jsonb, $9 base_revs jsonb: a new open proposal
insert into proposals (id, project_id, title, note, actor, created_at, mutations, preview, base_revs)
values ($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb, $8::jsonb, $9::jsonb)
returning *
