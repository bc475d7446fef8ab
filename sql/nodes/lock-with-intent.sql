-- $1 project_id text, $2 id text, $3 fields text[], $4 now timestamptz, $5 the writer's actor_key:
-- the node an update names, read and locked as lock-many.sql reads and locks it (its columns null
-- when it does not exist), and `intent`: the live edit intent of another actor on one of these
-- fields of that node (live.md, 4), the latest to end first, or null. One statement, so an update
-- checks the intents without a round trip of its own; fields empty: no intent is looked for.
with n as (
  select id, type, parent_id, data, created_at, rev, field_revs
  from nodes
  where project_id = $1 and id = $2
  for update
), i as (
  select user_id, user_name, agent, via, field, expires_at
  from presence
  where project_id = $1 and node_id = $2 and field = any($3::text[]) and expires_at > $4 and actor_key <> $5
  order by expires_at desc
  limit 1
)
select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev, n.field_revs, to_jsonb(i) as intent
from (values (1)) as one (x)
left join n on true
left join i on true
