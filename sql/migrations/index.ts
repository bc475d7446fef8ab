// The migrations, in order. Bun imports each file as text, so they travel inside a compiled binary.
// There is no 0015: the number was given to a change made at the same time as 0014 and 0016 that
// was never merged. Numbers are not reused or closed up: a database records the names it applied,
// and only the order matters (test/migrations.test.ts checks this list against the folder).
import m0001 from './0001-accounts-projects.sql' with { type: 'text' }
import m0002 from './0002-tree.sql' with { type: 'text' }
import m0003 from './0003-node-parent-fk.sql' with { type: 'text' }
import m0004 from './0004-integrations.sql' with { type: 'text' }
import m0005 from './0005-search.sql' with { type: 'text' }
import m0006 from './0006-view.sql' with { type: 'text' }
import m0007 from './0007-workflow.sql' with { type: 'text' }
import m0008 from './0008-leases.sql' with { type: 'text' }
import m0009 from './0009-webhook-fan-out.sql' with { type: 'text' }
import m0010 from './0010-open-memos.sql' with { type: 'text' }
import m0011 from './0011-own-keys-spent-states.sql' with { type: 'text' }
import m0012 from './0012-claims.sql' with { type: 'text' }
import m0013 from './0013-project-revisions.sql' with { type: 'text' }
import m0014 from './0014-history.sql' with { type: 'text' }
import m0016 from './0016-work-state.sql' with { type: 'text' }
import m0017 from './0017-view-per-view.sql' with { type: 'text' }
import m0018 from './0018-work-blockers.sql' with { type: 'text' }
import m0019 from './0019-changes-advance-revision.sql' with { type: 'text' }
import m0020 from './0020-revisions.sql' with { type: 'text' }
import m0021 from './0021-presence.sql' with { type: 'text' }
import m0022 from './0022-key-scopes.sql' with { type: 'text' }
import m0023 from './0023-work-deferred.sql' with { type: 'text' }
import m0024 from './0024-proposals.sql' with { type: 'text' }
import m0026 from './0026-work-counts.sql' with { type: 'text' }
import m0027 from './0027-work-triggers-lighter.sql' with { type: 'text' }
import m0029 from './0029-importing-projects.sql' with { type: 'text' }
import m0030 from './0030-work-writes-linear.sql' with { type: 'text' }
import m0031 from './0031-label-update-lighter.sql' with { type: 'text' }
import m0032 from './0032-work-items-no-fk.sql' with { type: 'text' }
import m0033 from './0033-job-add-lighter.sql' with { type: 'text' }
import m0034 from './0034-work-batch-lighter.sql' with { type: 'text' }
import m0036 from './0036-changes-revision-once.sql' with { type: 'text' }
import m0038 from './0038-job-add-rank.sql' with { type: 'text' }
import m0040 from './0040-node-rev-in-statements.sql' with { type: 'text' }
import m0041 from './0041-work-items-fewer-indexes.sql' with { type: 'text' }
import m0042 from './0042-change-row-lighter.sql' with { type: 'text' }
import m0043 from './0043-work-insert-counts.sql' with { type: 'text' }
import m0044 from './0044-work-update-when.sql' with { type: 'text' }
import m0045 from './0045-node-type-domain.sql' with { type: 'text' }
import m0046 from './0046-changes-statistics.sql' with { type: 'text' }
import m0048 from './0048-events-statistics.sql' with { type: 'text' }
import m0049 from './0049-open-memos-kept.sql' with { type: 'text' }
import m0052 from './0052-changes-sample.sql' with { type: 'text' }
import m0055 from './0055-work-kind-do-it.sql' with { type: 'text' }
import m0056 from './0056-batch-rows-lighter.sql' with { type: 'text' }
import m0057 from './0057-changes-keys-collate-c.sql' with { type: 'text' }

export const migrations: { name: string; sql: string }[] = [
  { name: '0001-accounts-projects', sql: m0001 },
  { name: '0002-tree', sql: m0002 },
  { name: '0003-node-parent-fk', sql: m0003 },
  { name: '0004-integrations', sql: m0004 },
  { name: '0005-search', sql: m0005 },
  { name: '0006-view', sql: m0006 },
  { name: '0007-workflow', sql: m0007 },
  { name: '0008-leases', sql: m0008 },
  { name: '0009-webhook-fan-out', sql: m0009 },
  { name: '0010-open-memos', sql: m0010 },
  { name: '0011-own-keys-spent-states', sql: m0011 },
  { name: '0012-claims', sql: m0012 },
  { name: '0013-project-revisions', sql: m0013 },
  { name: '0014-history', sql: m0014 },
  { name: '0016-work-state', sql: m0016 },
  { name: '0017-view-per-view', sql: m0017 },
  { name: '0018-work-blockers', sql: m0018 },
  { name: '0019-changes-advance-revision', sql: m0019 },
  { name: '0020-revisions', sql: m0020 },
  { name: '0021-presence', sql: m0021 },
  { name: '0022-key-scopes', sql: m0022 },
  { name: '0023-work-deferred', sql: m0023 },
  { name: '0024-proposals', sql: m0024 },
  { name: '0026-work-counts', sql: m0026 },
  { name: '0027-work-triggers-lighter', sql: m0027 },
  { name: '0029-importing-projects', sql: m0029 },
  { name: '0030-work-writes-linear', sql: m0030 },
  { name: '0031-label-update-lighter', sql: m0031 },
  { name: '0032-work-items-no-fk', sql: m0032 },
  { name: '0033-job-add-lighter', sql: m0033 },
  { name: '0034-work-batch-lighter', sql: m0034 },
  { name: '0036-changes-revision-once', sql: m0036 },
  { name: '0038-job-add-rank', sql: m0038 },
  { name: '0040-node-rev-in-statements', sql: m0040 },
  { name: '0041-work-items-fewer-indexes', sql: m0041 },
  { name: '0042-change-row-lighter', sql: m0042 },
  { name: '0043-work-insert-counts', sql: m0043 },
  { name: '0044-work-update-when', sql: m0044 },
  { name: '0045-node-type-domain', sql: m0045 },
  { name: '0046-changes-statistics', sql: m0046 },
  { name: '0048-events-statistics', sql: m0048 },
  { name: '0049-open-memos-kept', sql: m0049 },
  { name: '0052-changes-sample', sql: m0052 },
  { name: '0055-work-kind-do-it', sql: m0055 },
  { name: '0056-batch-rows-lighter', sql: m0056 },
  { name: '0057-changes-keys-collate-c', sql: m0057 },
]
