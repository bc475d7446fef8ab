-- $1 prefix text, $2 id text: the leases of earlier processes on this host and port (they are
-- gone: this process holds the port now), so writers do not wait for them to run out
delete from replicas where starts_with(id, $1) and id <> $2
