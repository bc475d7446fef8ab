-- $1 now timestamptz: links past their expiry stop being active; returns how many
with expired as (
  update share_tokens set active = false
  where active and expires_at is not null and expires_at <= $1
  returning 1
)
select count(*)::int as count from expired
