// What Arbor stores in Meilisearch: one document per node, with one vector per embedded text
// under the name of the embedder that made them (the index's embedder, meili-index.ts).

import type { Index } from 'meilisearch'
import type { NodeData } from '../ports/node-data'
import { embeddingTexts } from './document'
import type { EmbedQueue } from './embedder/runtime'
import { succeeded } from './meili-index'
import type { EventRow } from './queries'

/** documents embedded and sent per write to Meilisearch (a few seconds of embedding at most) */
const PUSH_CHUNK = 100

export interface Doc {
  uid: string
  projectId: string
  id: string
  type: string
  parentId: string | null
  /** the node's rev when the document was written (absent on documents written before revisions) */
  rev?: string
  label: string
  description?: string
  notes?: string
  measure?: string
  data: NodeData
  _vectors: Record<string, number[][]>
}

export type DocInput = { projectId: string; node: { id: string; rev?: string; type: string; parentId: string | null; data: NodeData } }

/** Document ids allow letters, digits, - and _: project ids have no _, so this is unambiguous. */
const uid = (projectId: string, id: string) => `${projectId}_${id}`

/** Documents for nodes, their texts embedded in one batch. */
export async function toDocs(queue: EmbedQueue, items: DocInput[]): Promise<Doc[]> {
  const texts = items.map((i) => embeddingTexts(i.node.data))
  const flat = await queue.embed(texts.flat())
  let k = 0
  return items.map(({ projectId, node }, i) => ({
    uid: uid(projectId, node.id),
    projectId,
    id: node.id,
    type: node.type,
    parentId: node.parentId ?? null,
    ...(node.rev ? { rev: node.rev } : {}),
    label: String(node.data.label ?? ''),
    description: node.data.description,
    notes: node.data.notes,
    measure: node.data.measure,
    data: node.data,
    _vectors: { [queue.id]: texts[i]!.map(() => Array.from(flat[k++]!)) },
  }))
}

/** What a run of node events asks of the index, the newest event per node winning: documents to delete and nodes to (re)write. */
export function planPush(rows: (EventRow & { project_id: string })[]): { deletes: string[]; upserts: DocInput[]; nodes: number } {
  const last = new Map<string, { projectId: string; event: string; node: DocInput['node'] }>()
  for (const r of rows) {
    const node = r.payload?.node
    if (!node?.id) continue
    const key = uid(r.project_id, node.id)
    last.delete(key)
    last.set(key, { projectId: r.project_id, event: r.payload.event, node })
  }
  const deletes = [...last].filter(([, v]) => v.event === 'node.deleted').map(([k]) => k)
  const upserts = [...last.values()].filter((v) => v.event !== 'node.deleted').map((v) => ({ projectId: v.projectId, node: v.node }))
  return { deletes, upserts, nodes: last.size }
}

/**
 * Push what the events say, the newest event per node winning, in chunks of PUSH_CHUNK
 * documents; the lease is renewed before each write (embedding a chunk takes seconds), and
 * null is returned, with nothing more written, once it is lost.
 */
export async function pushEvents(
  index: Index<Doc>,
  queue: EmbedQueue,
  rows: (EventRow & { project_id: string })[],
  holdLease: () => Promise<boolean>,
): Promise<number | null> {
  const { deletes, upserts, nodes } = planPush(rows)
  for (let i = 0; i < upserts.length; i += PUSH_CHUNK) {
    const docs = await toDocs(queue, upserts.slice(i, i + PUSH_CHUNK))
    if (!(await holdLease())) return null
    await succeeded(index.addDocuments(docs))
  }
  if (deletes.length) {
    if (!(await holdLease())) return null
    await succeeded(index.deleteDocuments(deletes))
  }
  return nodes
}
