-- $1 project_id text, $2 lease timestamptz: the project an import has just created, in the same
-- transaction, is its own until the import ends (migration 0029)
update projects set import_lease = $2
where id = $1 and import_lease is null
returning id
