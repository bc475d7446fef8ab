-- $1 project_id text, $2 node_id text, $3 agent text, $4 token_hash text, $5 expires_at timestamptz, $6 now timestamptz,
-- $7 lease_seconds integer: claim the node unless a live claim holds it or it is done, in one
-- statement. A concurrent claim of the same node waits on the claim row and then finds it live, so
-- two agents never both get it; the node row is read with a share lock, so a claim racing the
-- write that marks the node done waits for it and sees it done (reading `nodes` here is the one
-- place claims look at the tree: the readiness rule itself lives in src/work). Returns the claim,
-- or no row. $8 key_id text|null: the API key it is taken with (a 'work' key may update only what it holds).
with open_node as (
  select id from nodes
  where project_id = $1 and id = $2 and (data ->> 'status') is distinct from 'done'
  for share
)
insert into claims (project_id, node_id, agent, token_hash, expires_at, claimed_at, lease_seconds, key_id)
select $1, id, $3, $4, $5, $6, $7, $8 from open_node
on conflict (project_id, node_id) do update
  set agent = excluded.agent, token_hash = excluded.token_hash, expires_at = excluded.expires_at,
    claimed_at = excluded.claimed_at, lease_seconds = excluded.lease_seconds, key_id = excluded.key_id
  where claims.expires_at <= $6
returning node_id, agent, expires_at
