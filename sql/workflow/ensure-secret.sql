-- $1 name text, $2 value text: keeps the first value ever stored, so replicas agree
insert into server_secrets (name, value) values ($1, $2)
on conflict (name) do nothing
