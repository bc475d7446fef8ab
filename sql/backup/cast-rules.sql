-- The columns whose rule a table's CHECK constraint held until a domain took it over (migrations
-- 0042 and 0045: a table's check is planned again by every statement that writes the table, a
-- domain's once), each cast to its domain by the statements that write it. A restore inserts rows
-- by a generic statement of the columns' own types, without those casts: it runs this once its
-- rows are in, and a value outside its domain raises the domain's check_violation (23514). Every
-- domain a statement under sql/ casts to is here (test/nodes.type-domain.test.ts).
select
  (select count(type::node_type) from nodes) as nodes,
  (select count(target_kind::change_target_kind) from changes) as changes
