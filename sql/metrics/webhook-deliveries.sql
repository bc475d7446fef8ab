-- no parameters: webhook deliveries waiting for an attempt, and those given up on, for GET /metrics
select count(*) filter (where status = 'pending')::int as pending,
       count(*) filter (where status = 'failed')::int as failed
from webhook_deliveries
