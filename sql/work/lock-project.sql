-- $1 project_id text: one write at a time per project among those that write nodes, until the
-- transaction ends, so each reads the project before and after itself alone and _meta.unblocked
-- names exactly what it made ready (two concurrent done writes would otherwise each see the
-- other's job still open, and neither would report the work they unblocked together)
select pg_advisory_xact_lock(hashtextextended('arbor.unblock:' || $1, 0))
