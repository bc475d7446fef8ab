-- $1 consumer text: the last applied seq of an outbox consumer (no row: start from 0)
select seq, updated_at from search_cursors where consumer = $1
