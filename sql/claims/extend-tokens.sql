-- $1 project_id text, $2 token_hashes text[], $3 now timestamptz: a write carried these live
-- claims' tokens: each lasts its own length (lease_seconds) from now again, never less than it did
-- Each token joined to its claim by claims_token, as sql/nodes/delete-many.sql deletes nodes: as
-- `token_hash = any($2)` the generic plan read the project's claims and filtered on the tokens.
update claims c
set expires_at = greatest(c.expires_at, $3 + c.lease_seconds * interval '1 second')
from (
  select distinct $1::text as project_id, unnest((select $2::text[])) as token_hash
  limit (select cardinality($2::text[]))
) as k
where c.project_id = k.project_id and c.token_hash = k.token_hash and c.expires_at > $3
returning c.node_id, c.agent, c.expires_at
