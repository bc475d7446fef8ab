-- Scoped keys (live.md §6): a key's role and, optionally, the projects it works on. Every key
-- minted before this migration keeps doing everything its user may: role 'write', no list.
alter table api_keys add column scope_role text not null default 'write'
  check (scope_role in ('read', 'propose', 'work', 'write'));
alter table api_keys add column scope_projects text[]
  check (scope_projects is null or cardinality(scope_projects) between 1 and 50);

-- The key a claim was taken with: a 'work' key may update only a node whose live claim it holds.
-- Claims taken before this migration name no key (only a key with role 'write' may use them).
alter table claims add column key_id text;
