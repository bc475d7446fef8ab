-- $1 name text, $2 holder text: give the lease up (on shutdown), so another replica takes over at once
delete from leases where name = $1 and holder = $2
