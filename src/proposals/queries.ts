import closeSql from '../../sql/proposals/close.sql' with { type: 'text' }
import countOpenSql from '../../sql/proposals/count-open.sql' with { type: 'text' }
import getSql from '../../sql/proposals/get.sql' with { type: 'text' }
import insertSql from '../../sql/proposals/insert.sql' with { type: 'text' }
import listSql from '../../sql/proposals/list.sql' with { type: 'text' }
import lockSql from '../../sql/proposals/lock.sql' with { type: 'text' }
import pruneSql from '../../sql/proposals/prune.sql' with { type: 'text' }
import type { Db } from '../db'
import { one } from '../db/port'
import type { ProposalRow } from './model'

/** A proposal as `insert` stores it. */
export interface NewProposalRow {
  id: string
  projectId: string
  title: string
  note: string | null
  actor: unknown
  createdAt: Date
  mutations: unknown
  preview: unknown
  baseRevs: Record<string, string>
}

export const insert = async (db: Db, p: NewProposalRow) =>
  (await one<ProposalRow>(db, insertSql, [
    p.id,
    p.projectId,
    p.title,
    p.note,
    JSON.stringify(p.actor),
    p.createdAt.toISOString(),
    JSON.stringify(p.mutations),
    JSON.stringify(p.preview),
    JSON.stringify(p.baseRevs),
  ]))!

export const get = (db: Db, projectId: string, id: string) => one<ProposalRow>(db, getSql, [projectId, id])
export const lock = (db: Db, projectId: string, id: string) => one<ProposalRow>(db, lockSql, [projectId, id])

export const list = (db: Db, projectId: string, status: string | null, belowSeq: string | null, limit: number) =>
  db.query<ProposalRow>(listSql, [projectId, status, belowSeq, limit])

export const countOpen = async (db: Db, projectId: string) => (await one<{ count: number }>(db, countOpenSql, [projectId]))!.count

export const close = (
  db: Db,
  projectId: string,
  id: string,
  c: { status: string; by: unknown; at: Date; reason: string | null; changeIds: string[] | null },
) =>
  one<ProposalRow>(db, closeSql, [
    projectId,
    id,
    c.status,
    JSON.stringify(c.by),
    c.at.toISOString(),
    c.reason,
    c.changeIds === null ? null : JSON.stringify(c.changeIds),
  ])

export const prune = async (db: Db, before: Date) => (await one<{ count: number }>(db, pruneSql, [before.toISOString()]))!.count
