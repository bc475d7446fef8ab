-- $1 project_id text, $2 embedder text, $3 hashes text[], $4 vectors text[] (base64 of float32
-- little-endian): store new vectors; one another replica stored first is kept (same text, same
-- embedder, same vector). Base64 because a bytea[] parameter does not travel through every driver.
insert into search_vectors (project_id, embedder, text_hash, vector)
select $1, $2, h, decode(v, 'base64')
from unnest($3::text[], $4::text[]) as t(h, v)
on conflict do nothing
