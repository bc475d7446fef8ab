-- $1 project_id text, $2 status text|null, $3 below_seq bigint|null, $4 limit int: newest first
select * from proposals
where project_id = $1
  and ($2::text is null or status = $2)
  and ($3::bigint is null or seq < $3)
order by seq desc
limit $4
