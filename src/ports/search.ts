import type { Config } from '../config'
import type { Db } from '../db'
import type { Logger } from '../log'
import type { NodeData } from './node-data'
import type { ChangesHeard } from './replicas'

/**
 * What a search backend is built from: the config, the log and the app's own database handle
 * (never a transaction: the index follows the outbox on it). Narrower than `Deps`, which is
 * built after the backend and carries it.
 */
export interface SearchDeps {
  config: Config
  db: Db
  log: Logger
  /** PostgreSQL with replicas: the changes heard; while they vouch, a search of a project with no change heard reads no table */
  heard?: ChangesHeard
}

/** How a search ranks: both signals, or one alone. */
export type SearchMode = 'hybrid' | 'keyword' | 'semantic'

/** One search port; the built-in index and Meilisearch implement it (chosen by MEILI_URL). */
export interface SearchBackend {
  readonly name: 'builtin' | 'meilisearch'
  /** the embedder in use, and why it is not the preferred one when it is not */
  readonly choice: { embedder: { id: string }; fallback?: string; semanticRatio: number }
  search(projectId: string, request: SearchRequest): Promise<SearchAnswer>
  /** `_meta.advisory` for an add whose label and description are very close to an existing node's, or null. */
  duplicates(projectId: string, node: { id: string; type: string; data: NodeData }): Promise<DuplicateAdvisory | null>
  /** The background work of one scheduler run (follow events, embed, backfill); returns a summary. */
  tick(now: Date): Promise<Record<string, number>>
  /** Give up what this process holds for the others (the Meilisearch sync lease) when it stops. */
  stop?(): Promise<void>
  /** Bytes of memory the index holds, for the benchmark. */
  memory(): { projects: number; nodes: number; vectorBytes: number; pendingNodes: number }
  /** The built-in index: reads of the events outbox since start, to catch an index up (GET /metrics). */
  outboxReads?(): number
}

export interface SearchRequest {
  q: string
  type?: string
  limit: number
  mode: SearchMode
}

export interface SearchAnswer {
  hits: {
    node: { id: string; rev?: string; type: string; parentId: string | null; data: NodeData }
    similarity: number
    ancestors: { id: string; type: string; label: string }[]
  }[]
  /** what `_meta.search` says: backend, embedder, mode, and whether semantic scores covered everything */
  meta: {
    backend: string
    embedder: string
    mode: SearchMode
    /** 'rebuilding': the Meilisearch index is being (re)built for this server's embedder; results are by keyword until then */
    semantic: 'full' | 'partial' | 'unavailable' | 'off' | 'rebuilding'
    pendingNodes: number
    /** while pendingNodes > 0: estimated seconds until every waiting text is embedded (null before the first measured batch) */
    etaSeconds?: number | null
    /** the built-in sentence model is missing: what is used instead, and how to get it */
    fallback?: string
    /** why results are by keyword only when it is not the model's fault (the Meilisearch index is another embedder's) */
    reason?: string
  }
}

export interface DuplicateAdvisory {
  type: 'possible_duplicate'
  nodes: { id: string; label: string; similarity: number }[]
}
