-- no parameters
select count(*)::int as count from users
