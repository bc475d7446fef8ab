-- $1 user_id text, $2 since timestamptz: items this account sent since then
select count(*)::int as count from feedback where user_id = $1 and created_at > $2::timestamptz
