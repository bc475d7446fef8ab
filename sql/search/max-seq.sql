-- no parameters: the newest event seq overall (0: none)
select coalesce(max(seq), 0) as seq from events
