-- no parameters: until work_flush (or the commit), this transaction's node writes set their
-- work-state changes aside instead of recomputing them statement by statement (migration 0023)
select set_config('arbor.work_defer', 'on', true)
