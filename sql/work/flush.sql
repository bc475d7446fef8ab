-- no parameters: the work-state changes this transaction set aside, recomputed at once; deferral ends
select work_flush()
