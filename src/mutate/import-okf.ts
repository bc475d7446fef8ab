import { type Static, Type } from '@sinclair/typebox'
import { authChanged } from '../accounts/auth-cache'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { invalid } from '../errors'
import { BundleError, parseBundleYielding } from '../export/parse'
import { MAX_BATCH } from './model'
import { actions } from './service'

/**
 * POST /import-okf (`arbor import`): an OKF bundle (the files of GET /export-okf) becomes a new
 * project of the caller. The project, its iterations, its nodes (ids kept, so links hold) and
 * the kind of each classified task are written in ONE transaction, through the same actions as
 * POST /mutate (addProject, then batches of at most MAX_BATCH entries): a bundle the rules
 * refuse anywhere leaves nothing behind, not even the new project.
 */
/** POST /import-okf's body, checked by checkInput in the route. */
export const ImportBody = Type.Object(
  {
    files: Type.Record(Type.String(), Type.String(), { description: 'path → markdown, as GET /export-okf answers them' }),
    name: Type.Optional(Type.String({ description: "the new project's name; the bundle's title when absent" })),
  },
  { additionalProperties: false },
)

export async function importOkf(deps: Deps, user: User, body: Static<typeof ImportBody>) {
  let bundle: Awaited<ReturnType<typeof parseBundleYielding>>
  try {
    // outside the transaction, a turn to the event loop every few hundred files
    bundle = await parseBundleYielding(body.files)
  } catch (err) {
    if (err instanceof BundleError) throw invalid(err.message)
    throw err
  }
  // urgent is valid only beside kind do-it: without a kind it would have been dropped without a word
  const unkind = bundle.nodes.find((n) => n.urgent !== undefined && n.kind === undefined)
  if (unkind)
    throw invalid(
      `${unkind.id}: urgent is set without kind; urgent is only valid on a do-it task: add kind: do-it beside it, or remove urgent`,
    )
  const name = body.name ?? bundle.name
  const iterations = [...new Set(bundle.nodes.map((n) => n.data.iteration).filter((i): i is string => typeof i === 'string'))]
  // kind is the classifier's, never sent on creation (docs/reference/resources.md): the export's kind (and urgent, valid only
  // beside kind do-it) is set back by an update in the same transaction, after every node exists
  // blockedBy and serves name nodes that may come later in the bundle (an approach blocked by one
  // made after it): they are set by an update once every node exists
  const relations = (data: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(data).filter(([key]) => key === 'blockedBy' || key === 'serves'))
  const entries = [
    ...iterations.filter((i) => i !== 'Later').map((i) => ({ action: 'addIteration', iteration: { name: i } })),
    ...bundle.nodes.map(({ kind: _kind, urgent: _urgent, data: { blockedBy: _b, serves: _s, ...data }, ...node }) => ({
      action: 'add',
      node: { ...node, data },
    })),
    ...bundle.nodes
      .filter((n) => Object.keys(relations(n.data)).length > 0)
      .map((n) => ({ action: 'update', nodeId: n.id, data: relations(n.data) })),
    ...bundle.nodes
      .filter((n) => n.kind !== undefined)
      .map((n) => ({ action: 'update', nodeId: n.id, data: { kind: n.kind, ...(n.urgent !== undefined ? { urgent: n.urgent } : {}) } })),
  ]
  try {
    return await deps.db.tx(async (db) => {
      const inTx = { ...deps, db }
      const added = await actions.addProject.run(inTx, user, { action: 'addProject', project: { name, id: projectId(name) } })
      const project = added.project as { id: string; name: string }
      for (let i = 0; i < entries.length; i += MAX_BATCH)
        await actions.batch.run(inTx, user, { action: 'batch', projectId: project.id, mutations: entries.slice(i, i + MAX_BATCH) })
      return {
        success: true as const,
        project,
        nodes: bundle.nodes.length,
        _meta: {
          _tip: `Imported ${bundle.nodes.length} nodes into project ${project.id}. Read them with GET /nodes?projectId=${project.id}.`,
        },
      }
    })
  } catch (err) {
    // a read inside the undone transaction may have cached the project that no longer exists
    await authChanged(deps)
    throw err
  }
}

/** A project id from the name, with a suffix so a second import of the same bundle gets its own. */
const projectId = (name: string) =>
  `${
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'import'
  }-${Date.now().toString(36)}`
