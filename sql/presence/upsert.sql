-- $1 project_id, $2 actor_key, $3 user_id, $4 user_name, $5 agent|null, $6 via, $7 node_id|null,
-- $8 field|null, $9 note|null, $10 now timestamptz, $11 expires_at timestamptz: the actor's
-- presence posted (a new one replaces it). `since` stays while the actor stays on the same node
-- and field without a gap. Returns it with what it replaced (old_*: null when there was none),
-- so the caller says on the stream only what changed.
with old as (
  select node_id, field, note, expires_at from presence where project_id = $1 and actor_key = $2
), up as (
  insert into presence (project_id, actor_key, user_id, user_name, agent, via, node_id, field, note, since, expires_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
  on conflict (project_id, actor_key) do update set
    user_name = excluded.user_name,
    node_id = excluded.node_id,
    field = excluded.field,
    note = excluded.note,
    since = case
      when presence.expires_at > excluded.since
        and presence.node_id is not distinct from excluded.node_id
        and presence.field is not distinct from excluded.field then presence.since
      else excluded.since end,
    expires_at = excluded.expires_at
  returning since
)
select up.since, old.node_id as old_node_id, old.field as old_field, old.note as old_note, old.expires_at as old_expires_at
from up left join old on true
