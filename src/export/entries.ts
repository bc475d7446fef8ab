import { BundleError, type ImportedNode } from './parse'

/** Entries per block of an import's entries, as the bundle reader's worker hands them over. */
export const ENTRY_BLOCK = 10

/**
 * The batch entries that write a bundle's nodes (src/mutate/import-okf.ts), in blocks of
 * ENTRY_BLOCK, each block one JSON text: the thread that serves requests parses each block only
 * when it writes it, instead of receiving 15,000 objects at once.
 */
export function importBlocks(nodes: ImportedNode[]): { entries: number; blocks: string[] } {
  // urgent is valid only beside kind do-it: without a kind it would have been dropped without a word
  const unkind = nodes.find((n) => n.urgent !== undefined && n.kind === undefined)
  if (unkind)
    throw new BundleError(
      `${unkind.id}: urgent is set without kind; urgent is only valid on a do-it task: add kind: do-it beside it, or remove urgent`,
    )
  const iterations = [...new Set(nodes.map((n) => n.data.iteration).filter((i): i is string => typeof i === 'string'))]
  // kind is the classifier's, never sent on creation (docs/reference/resources.md): the export's kind (and urgent, valid only
  // beside kind do-it) is set back by an update after every node exists
  // blockedBy and serves name nodes that may come later in the bundle (an approach blocked by one
  // made after it): they are set by an update once every node exists
  const relations = (data: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(data).filter(([key]) => key === 'blockedBy' || key === 'serves'))
  const entries = [
    ...iterations.filter((i) => i !== 'Later').map((i) => ({ action: 'addIteration', iteration: { name: i } })),
    ...nodes.map(({ kind: _kind, urgent: _urgent, data: { blockedBy: _b, serves: _s, ...data }, ...node }) => ({
      action: 'add',
      node: { ...node, data },
    })),
    ...nodes
      .filter((n) => Object.keys(relations(n.data)).length > 0)
      .map((n) => ({ action: 'update', nodeId: n.id, data: relations(n.data) })),
    ...nodes
      .filter((n) => n.kind !== undefined)
      .map((n) => ({ action: 'update', nodeId: n.id, data: { kind: n.kind, ...(n.urgent !== undefined ? { urgent: n.urgent } : {}) } })),
  ]
  const blocks: string[] = []
  for (let i = 0; i < entries.length; i += ENTRY_BLOCK) blocks.push(JSON.stringify(entries.slice(i, i + ENTRY_BLOCK)))
  return { entries: entries.length, blocks }
}
