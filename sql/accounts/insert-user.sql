-- $1 id text, $2 name text, $3 tier text, $4 status text, $5 contributor boolean
insert into users (id, name, tier, status, contributor)
values ($1, $2, $3, $4, $5)
returning id, name, tier, status, lapsed, contributor, credits_used, credits_limit, created_at
