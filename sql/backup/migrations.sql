-- no parameters: the migrations applied to this database, in order; none when it has no schema yet
select name from arbor_migrations order by name
