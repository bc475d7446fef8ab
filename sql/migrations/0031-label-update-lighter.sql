-- A label update paid for nodes_rev_update (0020) walking the keys of the node's data in a
-- PL/pgSQL loop: a cursor over the union of the old and new keys (sorted to remove duplicates),
-- and one IF per key (issue 51, 3: bun bench/write-triggers-label.ts). The same field revs are now
-- found by one statement: the keys whose value changed or appeared (each key of new.data once),
-- and the keys that went away (those of old.data not in new.data), every one of them given the
-- new rev, as before; nothing else of the trigger changes.
create or replace function nodes_rev_update() returns trigger
language plpgsql as $$
declare
  r bigint := nextval('target_revs');
  fr jsonb := old.field_revs;
begin
  if new.parent_id is distinct from old.parent_id then fr := fr || jsonb_build_object('parentId', r); end if;
  fr := fr || coalesce((
    select jsonb_object_agg(x.k, r)
    from (
      select n.key from jsonb_each(new.data) n(key, value) where n.value is distinct from (old.data -> n.key)
      union all
      select o.key from jsonb_object_keys(old.data) o(key) where not (new.data ? o.key)
    ) x(k)), '{}'::jsonb);
  new.rev := r;
  new.field_revs := fr;
  return new;
end $$;
