-- $1 project_id text, $2 type text, $3 how_many integer: reserves the next numbers for a type;
-- returns the last one. The counter only grows, so an id is never handed out twice.
insert into node_counters (project_id, type, last)
values ($1, $2, $3)
on conflict (project_id, type) do update set last = node_counters.last + $3
returning last
