-- $1 id text: holds the user's row until the transaction ends, so rules counted per user
-- (the key cap, the last key) see every concurrent change of that user one at a time
select id from users where id = $1 for update
