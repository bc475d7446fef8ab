-- $1 consumer text, $2 seq bigint
insert into search_cursors (consumer, seq, updated_at)
values ($1, $2, now())
on conflict (consumer) do update set seq = excluded.seq, updated_at = now()
