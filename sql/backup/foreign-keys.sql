-- no parameters: every foreign key between tables of the current schema, with its columns on both sides
select c.relname as "table", f.relname as "references",
  to_jsonb(array(
    select a.attname from unnest(k.conkey) with ordinality as u (num, i)
    join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.num order by u.i
  )) as columns,
  to_jsonb(array(
    select a.attname from unnest(k.confkey) with ordinality as u (num, i)
    join pg_attribute a on a.attrelid = k.confrelid and a.attnum = u.num order by u.i
  )) as "refColumns"
from pg_constraint k
join pg_class c on c.oid = k.conrelid
join pg_class f on f.oid = k.confrelid
join pg_namespace n on n.oid = c.relnamespace
where k.contype = 'f' and n.nspname = current_schema()
order by c.relname, k.conname
