-- $1 project_id text, $2 node_id text: whether this transaction may try to claim the node now,
-- holding it until the transaction ends; false while another transaction is claiming it. A claim
-- with `count` passes over such a node instead of queueing behind that transaction's commit (it
-- would find the node taken after it); claims by `nodeIds` do not ask.
select pg_try_advisory_xact_lock(hashtextextended('arbor.claim:' || $1::text || ':' || $2::text, 0)) as held
