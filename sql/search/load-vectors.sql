-- $1 project_id text, $2 embedder text, $3 hashes text[]|null: stored vectors (all when $3 is null)
select text_hash, vector
from search_vectors
where project_id = $1 and embedder = $2
  and ($3::text[] is null or text_hash = any($3::text[]))
