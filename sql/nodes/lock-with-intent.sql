-- $1 project_id text, $2 id text, $3 fields text[], $4 now timestamptz:
-- the node an update names, read and locked as lock-many.sql reads and locks it (its columns null
-- when it does not exist), and `intents`: the live edit intents on one of these fields of that node
-- (live.md, 4), whoever holds them (the writer's own are picked out when the update is checked,
-- src/presence/intents.ts `refuseIfHeld`), the latest to end first, or null. One statement, so an
-- update reads the intents without a round trip of its own; fields empty: no intent is looked for.
with n as (
  select id, type, parent_id, data, created_at, rev, field_revs
  from nodes
  where project_id = $1 and id = $2
  for update
), i as (
  select user_id, user_name, agent, via, field, expires_at
  from presence
  where project_id = $1 and node_id = $2 and field = any($3::text[]) and expires_at > $4
)
select n.id, n.type, n.parent_id, n.data, n.created_at, n.rev, n.field_revs,
  (select jsonb_agg(to_jsonb(i) order by i.expires_at desc) from i) as intents
from (values (1)) as one (x)
left join n on true
