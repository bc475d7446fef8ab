-- $1 name text
select value from server_secrets where name = $1
