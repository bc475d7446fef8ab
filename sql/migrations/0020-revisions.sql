-- Revisions (live.md, 1): every node and iteration carries `rev`, a number from one sequence
-- that a committed change of the target moves, and only that (claims, classified_at and
-- updated_at alone leave it), and `field_revs`: for each field changed since the row was
-- inserted, the rev that last changed it (`parentId` and the keys of `data`; an iteration's
-- name, status, gitTags, sortOrder). A write with ifRev is refused when a field it sets has a
-- field rev above it (src/history/precondition.ts); `*` holds the rev the row was inserted with
-- (every field counts as changed then: a node restored after a delete). A row inserted again (a restore) takes a new
-- rev: the sequence never gives a value twice. The API shows rev as text (src/ports/rev.ts).
-- Set by triggers, so every path that writes these tables (a batch, a revert, the classifier, an
-- iteration's rename moving its jobs) keeps them without a line of its own; a restore of a
-- backup turns user triggers off and keeps the stored values.
create sequence target_revs;

alter table nodes add column rev bigint not null default nextval('target_revs');
alter table nodes add column field_revs jsonb not null default '{}';
alter table iterations add column rev bigint not null default nextval('target_revs');
alter table iterations add column field_revs jsonb not null default '{}';

create function targets_rev_insert() returns trigger
language plpgsql as $$
begin
  new.field_revs := jsonb_build_object('*', new.rev);
  return new;
end $$;

create trigger nodes_rev_insert before insert on nodes for each row execute function targets_rev_insert();
create trigger iterations_rev_insert before insert on iterations for each row execute function targets_rev_insert();

create function nodes_rev_update() returns trigger
language plpgsql as $$
declare
  r bigint := nextval('target_revs');
  fr jsonb := old.field_revs;
  k text;
begin
  if new.parent_id is distinct from old.parent_id then fr := fr || jsonb_build_object('parentId', r); end if;
  for k in select jsonb_object_keys(old.data) union select jsonb_object_keys(new.data) loop
    if (old.data -> k) is distinct from (new.data -> k) then fr := fr || jsonb_build_object(k, r); end if;
  end loop;
  new.rev := r;
  new.field_revs := fr;
  return new;
end $$;

create trigger nodes_rev before update of data, parent_id on nodes for each row
when (old.data is distinct from new.data or old.parent_id is distinct from new.parent_id)
execute function nodes_rev_update();

create function iterations_rev_update() returns trigger
language plpgsql as $$
declare
  r bigint := nextval('target_revs');
  fr jsonb := old.field_revs;
begin
  if new.name is distinct from old.name then fr := fr || jsonb_build_object('name', r); end if;
  if new.status is distinct from old.status then fr := fr || jsonb_build_object('status', r); end if;
  if new.git_tags is distinct from old.git_tags then fr := fr || jsonb_build_object('gitTags', r); end if;
  if new.sort_order is distinct from old.sort_order then fr := fr || jsonb_build_object('sortOrder', r); end if;
  new.rev := r;
  new.field_revs := fr;
  return new;
end $$;

create trigger iterations_rev before update of name, status, git_tags, sort_order on iterations for each row
when (old.name is distinct from new.name or old.status is distinct from new.status
  or old.git_tags is distinct from new.git_tags or old.sort_order is distinct from new.sort_order)
execute function iterations_rev_update();
