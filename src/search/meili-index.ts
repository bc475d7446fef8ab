// Which embedder built the Meilisearch index, and rebuilding it for another one.
//
// The index records its embedder as the name of its one user-provided embedder, with the vector
// size: a server whose embedder differs must not send vectors to it (Meilisearch refuses vectors
// of another size, and another model's vectors of the same size would rank nonsense), so it
// searches by keyword and says why. A rebuild fills a side index, `<index>_next`, from the
// database and swaps it in at once (one Meilisearch task): until then search answers from the
// old index, by keyword, and an index that carries an embedder's name is always complete for it.
// Who rebuilds is settled by the sync lease (meili.ts): the index follows the embedder of the
// replica that holds it.

import { type Index, type Meilisearch, MeilisearchApiError } from 'meilisearch'
import type { Db } from '../db'
import type { NodeData } from '../ports/node-data'
import { formatRev } from '../ports/rev'
import * as q from './queries'

/** the settings every index of ours has, besides its embedder */
const BASE_SETTINGS = { filterableAttributes: ['projectId', 'type'], searchableAttributes: ['label', 'description', 'measure', 'notes'] }

/** `ready`: the index was built with our embedder. Otherwise the embedder it was built with (null: none yet) and whether a rebuild for ours is under way. */
export type IndexState = { ready: true } | { ready: false; built: string | null; rebuilding: boolean }

export interface Embedding {
  /** the embedder's id, the name of the index's embedder */
  id: string
  dims: number
}

export const sideIndex = (uid: string) => `${uid}_next`

const notFound = (err: unknown) => err instanceof MeilisearchApiError && err.cause?.code === 'index_not_found'

/** The embedders of an index by name, or null when it does not exist. */
async function embeddersOf(index: Index): Promise<Record<string, { dimensions?: number }> | null> {
  try {
    // every embedder of ours is user-provided: its settings carry `dimensions`
    return Object.fromEntries(
      Object.entries((await index.getEmbedders()) ?? {}).map(([name, e]) => [
        name,
        { dimensions: e && 'dimensions' in e ? (e.dimensions ?? undefined) : undefined },
      ]),
    )
  } catch (err) {
    if (notFound(err)) return null
    throw err
  }
}

export async function readState(client: Meilisearch, uid: string, own: Embedding): Promise<IndexState> {
  const live = await embeddersOf(client.index(uid))
  if (live?.[own.id]?.dimensions === own.dims) return { ready: true }
  const next = await embeddersOf(client.index(sideIndex(uid)))
  return { ready: false, built: Object.keys(live ?? {})[0] ?? null, rebuilding: next?.[own.id]?.dimensions === own.dims }
}

/**
 * `_meta.search` while the index is not ours: 'rebuilding' while a rebuild for our embedder is
 * under way or this process (holding the lease) is about to start one, else 'unavailable'; and why.
 * `contested`: the embedder a server outside our lease rebuilt the index for, after it was ours.
 */
export function keywordOnly(
  state: IndexState & { ready: false },
  own: string,
  me: { holding: boolean; contested?: string },
): { semantic: 'rebuilding' | 'unavailable'; reason: string } {
  if (me.contested)
    return {
      semantic: 'unavailable',
      reason:
        `the Meilisearch index was rebuilt with embedder ${me.contested} by a server outside this database's sync lease (another Arbor database sharing this Meilisearch?) and this server uses ${own}: ` +
        'results are ranked by keyword only, and this server does not rebuild it back. Give every server that shares the index the same embedder, ' +
        'or each deployment its own Meilisearch; `npm run search:rebuild` makes the index this server’s again (docs/meilisearch.md)',
    }
  if (state.rebuilding || me.holding)
    return {
      semantic: 'rebuilding',
      reason: state.built
        ? `the Meilisearch index was built with embedder ${state.built} and is being rebuilt from the database for this server's embedder ${own}: results are ranked by keyword until then`
        : `the Meilisearch index is being built from the database for embedder ${own}: results are ranked by keyword until then`,
    }
  return {
    semantic: 'unavailable',
    reason:
      `the Meilisearch index was built with embedder ${state.built ?? '(none)'} and this server uses ${own}: results are ranked by keyword only. ` +
      'The index follows the embedder of the replica that holds the sync lease; give every replica the same embedder ' +
      '(the same EMBEDDINGS_URL and EMBEDDINGS_MODEL, or the sentence model in every replica, see docs/meilisearch.md)',
  }
}

/** Create the index with its base settings when it does not exist (an empty index built by no embedder yet). */
export async function ensureIndex(client: Meilisearch, uid: string): Promise<void> {
  const created = await client.createIndex(uid, { primaryKey: 'uid' }).waitTask()
  if (created.status !== 'succeeded') return // index_already_exists: another process, or an earlier start, made it
  await succeeded(client.index(uid).updateSettings(BASE_SETTINGS))
}

export async function succeeded(p: ReturnType<Index['addDocuments']>): Promise<void> {
  const task = await p.waitTask({ timeout: 60_000 })
  if (task.status !== 'succeeded') throw new Error(`meilisearch task ${task.uid} ${task.status}: ${JSON.stringify(task.error)}`)
}

export interface Rebuild<D> {
  client: Meilisearch
  db: Db
  uid: string
  own: Embedding
  /** documents, with vectors, for a page of nodes */
  docs: (rows: { projectId: string; node: { id: string; type: string; parentId: string | null; data: NodeData } }[]) => Promise<D[]>
  /** false once this process may no longer write (the sync lease was lost): the rebuild stops there */
  mayWrite: () => Promise<boolean>
  log: (msg: string) => void
}

/**
 * Fill `<uid>_next` from the database for our embedder and swap it in; the old index is dropped.
 * Returns the number of nodes and the last event seq they include (the caller moves the sync
 * cursor there), or null when the lease was lost on the way (the side index is left for the next try,
 * which starts it over).
 */
export async function rebuildIndex<D>(r: Rebuild<D>): Promise<{ total: number; seq: number } | null> {
  const next = sideIndex(r.uid)
  const seq = await q.maxSeq(r.db)
  await r.client.deleteIndex(next).waitTask() // a failed earlier try; index_not_found is fine
  await succeeded(r.client.createIndex(next, { primaryKey: 'uid' }))
  await succeeded(
    r.client
      .index(next)
      .updateSettings({ ...BASE_SETTINGS, embedders: { [r.own.id]: { source: 'userProvided', dimensions: r.own.dims } } }),
  )
  let after: [string, string] = ['', '']
  let total = 0
  for (;;) {
    const rows = await q.listAllNodes(r.db, after, 200)
    if (rows.length === 0) break
    const docs = await r.docs(
      rows.map((n) => ({
        projectId: n.project_id,
        node: { id: n.id, rev: formatRev('node', n.id, n.rev), type: n.type, parentId: n.parent_id, data: n.data },
      })),
    )
    if (!(await r.mayWrite())) return null
    await succeeded(r.client.index(next).addDocuments(docs as Record<string, unknown>[]))
    total += rows.length
    after = [rows[rows.length - 1]!.project_id, rows[rows.length - 1]!.id]
    r.log(`indexed ${total} nodes`)
  }
  if (!(await r.mayWrite())) return null
  await ensureIndex(r.client, r.uid) // a swap needs both indexes
  await succeeded(r.client.swapIndexes([{ indexes: [r.uid, next], rename: false }]))
  await r.client.deleteIndex(next).waitTask() // the old index, now under the side name
  return { total, seq }
}
