// A batch of job adds as the saving step stores it, for the benchmarks that time its change rows
// (bench/history-batch-insert.ts, bench/history-batch-parts.ts): the request's author, an add
// change per job (src/history/change.ts nodeChange: before null, after {parentId, data}, fields
// parentId and the data's keys) and a node.added event per job (src/events/outbox.ts insertEvents'
// payload), in project 'bench' under 'approach-1'; and the CPU of a PostgreSQL database's backends.

import { readFileSync } from 'node:fs'
import type { Db } from '../../src/db'

export const batchActor = { userId: 'usr_1', userName: 'Ann', keyId: 'key_1', via: 'api' as const }

/** `rows` job adds' change drafts, job-0 … job-<rows − 1>, each labelled by `label(i)` */
export const jobAddDrafts = (rows: number, label: (i: number) => string) =>
  Array.from({ length: rows }, (_, i) => ({
    action: 'add' as const,
    kind: 'node' as const,
    id: `job-${i}`,
    type: 'job',
    before: null,
    after: { parentId: 'approach-1', data: { label: label(i) } },
    fields: ['parentId', 'label'],
  }))

/** the node.added events of `drafts`, as the outbox stores them (sql/events/insert-many.sql's `$2`) */
export const addedEvents = (drafts: ReturnType<typeof jobAddDrafts>, timestamp = new Date().toISOString()) =>
  drafts.map((d) => ({
    type: 'node.added',
    payload: {
      event: 'node.added',
      project_id: 'bench',
      timestamp,
      node: { id: d.id, rev: '1', type: 'job', parentId: 'approach-1', data: d.after.data },
      actor: { userId: batchActor.userId, userName: batchActor.userName, via: batchActor.via },
    },
  }))

/** the insert's head of every column of a change row a statement sets (sql/history/insert-many.sql's) */
export const CHANGES_INSERT = `insert into changes (
    project_id, user_id, user_name, key_id, agent, via, request_id,
    action, target_kind, target_id, target_type, before, after, fields, revert_of, proposal
  )`

/** the changes of `$8` (insert-many.sql's jsonb) as jsonb_array_elements' values, each field by -> or ->>, in order, their ids returned */
export const ELEMENTS_INSERT = `${CHANGES_INSERT}
  select $1, $2, $3, $4, $5, $6, $7,
    c.v ->> 'action', (c.v ->> 'kind')::change_target_kind, c.v ->> 'id', c.v ->> 'type',
    nullif(c.v -> 'before', 'null'), nullif(c.v -> 'after', 'null'), c.v -> 'fields', (c.v ->> 'revertOf')::bigint, c.v -> 'proposal'
  from jsonb_array_elements($8::jsonb) with ordinality as c(v, n)
  order by c.n
  returning id`

/**
 * PostgreSQL: a reader of the CPU ms the backends of `db`'s database have run (/proc/<pid>/schedstat,
 * the server on this machine), those connected now (pg_stat_activity); a backend gone counts nothing.
 */
export async function backendsCpuMs(db: Db): Promise<() => number> {
  const pids = (await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()')).map((r) =>
    Number(r.pid),
  )
  return () =>
    pids.reduce((s, pid) => {
      try {
        return s + Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
      } catch {
        return s
      }
    }, 0)
}
