-- Own API keys (agents-and-app.md §5): the list shows each key's first 8 characters and when it
-- was last used. Keys minted before this migration have no stored prefix (only the hash was
-- kept); the list shows them as 'arb_', the part every key shares.
alter table api_keys add column prefix text;
alter table api_keys add column last_used_at timestamptz;
-- the 20-key cap and the last-key rule count a user's live keys
create index api_keys_user_live on api_keys (user_id) where revoked_at is null;

-- A workflow state whose terminal step applied is spent: its digest is kept until the state
-- would have expired anyway, so the same state cannot apply a second changeset. The primary key
-- makes the spending a conditional insert: of two concurrent applies, one inserts.
create table workflow_spent_states (
  digest text primary key,
  expires_at timestamptz not null
);
create index workflow_spent_states_expiry on workflow_spent_states (expires_at);
