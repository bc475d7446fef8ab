-- $1 digest text (sha256 of the state), $2 expires_at timestamptz (the state's own expiry):
-- one row back when this call spent the state, none when it was spent already. Of two
-- concurrent spenders the second waits for the first to commit, then gets none.
insert into workflow_spent_states (digest, expires_at)
values ($1, $2)
on conflict (digest) do nothing
returning digest
