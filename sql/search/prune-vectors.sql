-- $1 project_id text, $2 embedder text, $3 live text[]: forget vectors of texts no node has any more
delete from search_vectors
where project_id = $1 and embedder = $2 and not (text_hash = any($3::text[]))
