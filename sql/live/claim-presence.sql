-- $1 project_id, $2 now: the project's live claims as presence (live.md, 3), each with the actor of
-- the node.claimed event that took it (null when that event is no longer kept).
select c.node_id, c.agent, c.claimed_at, c.expires_at, e.payload -> 'actor' as actor
from claims c
left join lateral (
  select payload from events
  where project_id = c.project_id and type = 'node.claimed' and payload ->> 'nodeId' = c.node_id
  order by seq desc
  limit 1
) e on true
where c.project_id = $1 and c.expires_at > $2
order by c.claimed_at, c.node_id
