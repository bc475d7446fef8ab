-- Presence (live.md, 3): who is on which node of a project now, and which field they edit (an
-- edit intent, live.md 4). One row per actor (user, agent, via) and project; a post replaces it.
-- Rows live 30 seconds unless posted again; the presence loop deletes expired ones and says so on
-- the stream. Not a change, not an event: nothing here reaches /events, history or webhooks.
create table presence (
  project_id text not null references projects (id) on delete cascade,
  -- userId, agent and via joined by newlines: the actor's identity
  actor_key text not null,
  user_id text not null,
  user_name text not null,
  agent text,
  via text not null,
  node_id text,
  field text,
  note text,
  since timestamptz not null,
  expires_at timestamptz not null,
  primary key (project_id, actor_key)
);
create index presence_expiry on presence (expires_at);
-- the edit-intent check of every update reads the intents on one node
create index presence_intents on presence (project_id, node_id) where field is not null;
