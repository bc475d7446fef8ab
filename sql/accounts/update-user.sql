-- $1 id text, $2 name text|null, $3 tier text|null, $4 status text|null, $5 lapsed boolean|null,
-- $6 contributor boolean|null, $7 set_credits_limit boolean, $8 credits_limit integer|null
-- A null leaves the column as it is; credits_limit may be set to null (unlimited), hence $7.
update users set
  name = coalesce($2, name),
  tier = coalesce($3, tier),
  status = coalesce($4, status),
  lapsed = coalesce($5, lapsed),
  contributor = coalesce($6, contributor),
  credits_limit = case when $7 then $8 else credits_limit end
where id = $1
returning id, name, tier, status, lapsed, contributor, credits_used, credits_limit, created_at
