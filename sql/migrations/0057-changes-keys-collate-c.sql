-- The two text columns of changes' keys, project_id and target_id, compare in collation "C": by
-- their bytes. Every change row writes two index entries, the key (project_id, id) and
-- changes_target (project_id, target_id, id desc), and a 100-add batch two hundred; on a server
-- whose database collation is a libc locale (C.UTF-8 here) each comparison of two different keys
-- on the way down went through strcoll. No read of changes needs a language's order: they find a
-- project's or a target's changes by equality, newest first by id, and the prune
-- (sql/history/prune.sql) steps from one project to the next in the key's order, whatever it is.
-- Equality is the same in either (both collations are deterministic). ALTER COLUMN TYPE to the same
-- type in another collation rewrites no row; it rebuilds the two indexes, and drops the columns'
-- statistics, which the analyze below takes again. PGlite's databases are "C" already: there
-- nothing compares differently. bench/writes.md, "Seventeenth pass: history's share of the batch
-- on PostgreSQL" has the figures.
alter table changes
  alter column project_id type text collate "C",
  alter column target_id type text collate "C";
analyze changes (project_id, target_id);
