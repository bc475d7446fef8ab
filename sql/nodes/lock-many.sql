-- $1 project_id text, $2 ids text[]: lock those nodes until the transaction ends (a revert holds
-- what it takes back, so no write slips in between its conflict check and its own writes)
select id from nodes where project_id = $1 and id = any($2::text[]) order by id for update
