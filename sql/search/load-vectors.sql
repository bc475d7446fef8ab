-- $1 project_id text, $2 embedder text, $3 hashes text[]: the stored vectors of those texts, in no
-- order (all of them: all-vectors.sql)
-- Each hash is a lateral probe of the primary key (offset 0 keeps it as written), as
-- sql/nodes/get-many.sql finds its ids. As one statement with `($3 is null or text_hash =
-- any($3))`, the generic plan a prepared statement keeps after five runs could not use the hashes
-- in the key: it read every vector of the project and embedder and filtered them (a table no analyze
-- had seen, thousands of small projects), and once analyzed it scanned the table. The array is read
-- through a sub-select and the project and embedder carried as columns of the hashes' rows, so the
-- plan cache keeps the generic plan and no plan weighs the project by its statistics
-- (bench/writes.md "Twelfth pass: the last lists of ids").
select v.text_hash, v.vector
from (select distinct $1::text as project_id, $2::text as embedder, unnest((select $3::text[])) as text_hash) as k
cross join lateral (
  select s.text_hash, s.vector
  from search_vectors s
  where s.project_id = k.project_id and s.embedder = k.embedder and s.text_hash = k.text_hash
  offset 0
) v
