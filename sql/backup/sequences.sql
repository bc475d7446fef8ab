-- no parameters: every sequence of the current schema
select c.relname as name
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = current_schema() and c.relkind = 'S'
order by c.relname
