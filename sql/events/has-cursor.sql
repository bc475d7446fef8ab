-- $1 project_id, $2 txid xid8, $3 seq bigint: is the project's event at this cursor still kept?
-- (the stream, live.md 2: a cursor whose event is gone is older than the events kept)
select exists (select 1 from events where project_id = $1 and txid = $2::xid8 and seq = $3) as kept
