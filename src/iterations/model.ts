import { Type } from '@sinclair/typebox'
import type { IterationRow } from './queries'

/** GET /iterations parameters, typed; the route takes their query-string form (asQuery). */
export const IterationsParams = Type.Object({
  projectId: Type.String(),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('done')])),
  current: Type.Optional(Type.Boolean({ description: 'true: only the current iteration (first active, non-system)' })),
})

export const LATER = 'Later'

export interface Iteration {
  name: string
  status: 'active' | 'done'
  system: boolean
  sortOrder: number
  gitTags: string[]
  /** milliseconds since the epoch, as api.md's Iteration table says */
  completedAt: number | null
}

export function toIteration(row: IterationRow): Iteration {
  return {
    name: row.name,
    status: row.status,
    system: row.system,
    sortOrder: row.sort_order,
    gitTags: row.git_tags ?? [],
    completedAt: row.completed_at ? new Date(row.completed_at).getTime() : null,
  }
}

/** The first active, non-system iteration by sortOrder (rows come sorted). */
export function currentOf<T extends { status: string; system: boolean }>(sorted: T[]): T | null {
  return sorted.find((i) => i.status === 'active' && !i.system) ?? null
}
