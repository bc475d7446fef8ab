import type { IterationRow } from './queries'

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
