-- $1 project_id text, $2 embedder text: every stored vector of the project from that embedder
-- (some of them by their texts: load-vectors.sql)
select text_hash, vector
from search_vectors
where project_id = $1 and embedder = $2
