-- $1 project_id text, $2 after bigint, $3 view text: commands the view has not applied yet, oldest first
select c.seq, c.command, c.created_at
from view_commands c
join view_states s on s.project_id = c.project_id and s.view = c.view
where c.project_id = $1 and c.view = $3 and c.seq > greatest($2, s.command_seq)
order by c.seq
limit 100
