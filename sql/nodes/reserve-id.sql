-- $1 project_id text, $2 type text, $3 number integer: an explicit id (a batch loading an
-- export) moves the counter past it, so generated ids never collide with it later
insert into node_counters (project_id, type, last)
values ($1, $2, $3)
on conflict (project_id, type) do update set last = greatest(node_counters.last, $3)
