-- $1 project_id text, $2 lease timestamptz|null: an import moves its project's lease on after each
-- chunk, and sets it to null when its last chunk commits (the project appears); no row: the
-- project is gone or already finished, and the import stops
update projects set import_lease = $2
where id = $1 and import_lease is not null
returning id
