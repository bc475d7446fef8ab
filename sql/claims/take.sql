-- $1 project_id text, $2 node_id text, $3 agent text, $4 token_hash text, $5 expires_at timestamptz, $6 now timestamptz:
-- claim the node unless a live claim holds it, in one statement: a concurrent claim of the same
-- node waits on the row and then finds it live, so two agents never both get it. Returns the
-- claim, or no row when the node was held.
insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at)
values ($1, $2, $3, $4, $5, $6)
on conflict (project_id, node_id) do update
  set agent = excluded.agent, token_hash = excluded.token_hash, expires_at = excluded.expires_at, claimed_at = excluded.claimed_at
  where claims.expires_at <= $6
returning node_id, agent, expires_at
