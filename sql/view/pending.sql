-- $1 project_id text, $2 after bigint: commands a client has not applied yet, oldest first
select c.seq, c.command, c.created_at
from view_commands c
join view_states s on s.project_id = c.project_id
where c.project_id = $1 and c.seq > greatest($2, s.command_seq)
order by c.seq
limit 100
