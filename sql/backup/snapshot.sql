-- no parameters: the first statement of a backup's transaction (PostgreSQL): one snapshot for every table, writing nothing
set transaction isolation level repeatable read, read only
