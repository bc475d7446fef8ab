-- $1 token text, $2 now timestamptz: a link that serves right now, with its project's name
select s.token, s.project_id, s.settings, p.name as project_name
from share_tokens s
join projects p on p.id = s.project_id
where s.token = $1
  and s.active and s.revoked_at is null and (s.expires_at is null or s.expires_at > $2)
