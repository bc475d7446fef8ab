-- $1 project_id text, $2 node_id text, $3 agent text, $4 now timestamptz: the claim's own agent
-- read its node: the live claim lasts its own length from now again, when that moves its expiry
-- by a second or more (a burst of reads renews it once, not once per read)
update claims
set expires_at = $4 + lease_seconds * interval '1 second'
where project_id = $1 and node_id = $2 and agent = $3 and expires_at > $4
  and expires_at + interval '1 second' <= $4 + lease_seconds * interval '1 second'
returning node_id, agent, expires_at
