-- no parameters: every ordinary table of the current schema with its columns in order, and which columns are generated
select c.relname as name,
  to_jsonb(array(
    select a.attname from pg_attribute a
    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped order by a.attnum
  )) as columns,
  to_jsonb(array(
    select a.attname from pg_attribute a
    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated <> '' order by a.attnum
  )) as generated
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
order by c.relname
