-- $1 id bigint
update changelog set restored_at = now() where id = $1
