-- $1 before timestamptz: the projects whose import stopped moving its lease before then (a killed
-- process, or a clean-up cut short), oldest first
select id from projects
where import_lease is not null and import_lease < $1
order by import_lease, id
