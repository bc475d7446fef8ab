// The statements of the shared HTTP layer (idempotency records), the only file of src/http that reads SQL.
import claimSql from '../../sql/idempotency/claim.sql' with { type: 'text' }
import completeSql from '../../sql/idempotency/complete.sql' with { type: 'text' }
import deleteExpiredSql from '../../sql/idempotency/delete-expired.sql' with { type: 'text' }
import getSql from '../../sql/idempotency/get.sql' with { type: 'text' }
import ownSql from '../../sql/idempotency/own.sql' with { type: 'text' }
import releaseSql from '../../sql/idempotency/release.sql' with { type: 'text' }

export const idempotencySql = {
  claim: claimSql,
  complete: completeSql,
  deleteExpired: deleteExpiredSql,
  get: getSql,
  own: ownSql,
  release: releaseSql,
}
