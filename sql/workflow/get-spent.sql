-- $1 digest text: one row when the state is spent
select digest from workflow_spent_states where digest = $1
