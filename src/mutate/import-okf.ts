import { authChanged } from '../accounts/auth-cache'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { ErrorListError, invalid, RefusalError } from '../errors'
import { BundleError, parseBundleOffThread } from '../export/parse'
import { beginImport, giveWay, importLease, removeImport, renewImport } from '../projects/importing'
import { actions } from './service'

/**
 * POST /import-okf (`arbor import`): an OKF bundle (the files of GET /export-okf) becomes a new
 * project of the caller. The project, its iterations, its nodes (ids kept, so links hold) and
 * the kind of each classified task are written through the same actions as POST /mutate
 * (addProject, then batches), in chunks: each a short transaction of its own, with the other
 * requests' turn between them, so that a 15,000-task import does not hold PGlite's one session
 * for seconds (issue 50, 3). Until the last chunk commits the project is the import's alone
 * (src/projects/importing.ts: listed nowhere, refused to every other request); a bundle the rules
 * refuse anywhere, or a failure, removes all it wrote, the project too, and a killed process's
 * import is removed by the clean-up loop. All or nothing, as a user sees it.
 */
export async function importOkf(deps: Deps, user: User, body: { files: Record<string, string>; name?: string }) {
  let bundle: Awaited<ReturnType<typeof parseBundleOffThread>>
  try {
    // on a thread of its own: seconds of YAML for a large bundle
    bundle = await parseBundleOffThread(body.files)
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
  // the project first, in a transaction of its own, marked as the import's: nobody sees it until the end
  const project = await deps.db.tx(async (db) => {
    const added = await actions
      .get('addProject')!
      .run({ ...deps, db }, user, { action: 'addProject', project: { name, id: projectId(name) } })
    const project = added.project as { id: string; name: string }
    await beginImport(db, project.id, importLease(deps.now()))
    return project
  })
  const own = { ...deps, importing: project.id }
  let written = 0
  let told = performance.now()
  try {
    for (let size = FIRST_CHUNK; written < entries.length; ) {
      const chunk = entries.slice(written, written + size)
      const started = performance.now()
      await deps.db.tx(async (db) => {
        if (!(await renewImport(db, project.id, importLease(deps.now()))))
          throw new RefusalError(409, 'import_abandoned', { message: `Project ${project.id} was removed while the import wrote it` })
        await actions.get('batch')!.run({ ...own, db }, user, { action: 'batch', projectId: project.id, mutations: chunk })
      })
      written += chunk.length
      const took = performance.now() - started
      if (performance.now() - told >= PROGRESS_MS || written === chunk.length) {
        told = performance.now()
        deps.log.info('import progress', { projectId: project.id, written, entries: entries.length })
      }
      // the next chunk sized to take about CHUNK_MS; then the others' turn, for as long as this one held the database
      size = Math.max(MIN_CHUNK, Math.min(MAX_CHUNK, Math.round((chunk.length * CHUNK_MS) / Math.max(took, 1))))
      await giveWay(deps.db, took)
    }
    // the import's one commit as a user sees it: the project appears, whole
    if (!(await renewImport(deps.db, project.id, null)))
      throw new RefusalError(409, 'import_abandoned', { message: `Project ${project.id} was removed while the import wrote it` })
  } catch (err) {
    throw await undone(deps, project.id, written, err)
  } finally {
    // reads may have cached the project as importing (or, undone, as existing)
    await authChanged(deps)
  }
  return {
    success: true as const,
    project,
    nodes: bundle.nodes.length,
    _meta: {
      _tip: `Imported ${bundle.nodes.length} nodes into project ${project.id}. Read them with GET /nodes?projectId=${project.id}.`,
    },
  }
}

/** Entries of the first chunk; later ones are sized by the time the last took. */
const FIRST_CHUNK = 50
const MIN_CHUNK = 10
const MAX_CHUNK = 200
/** how often the log says how far an import is (and once after its first chunk) */
const PROGRESS_MS = 1000
/** how long one chunk's transaction should hold the database (PGlite's one session) */
const CHUNK_MS = 40

/**
 * The import failed part-way: what it wrote goes (the project too), and the answer says so. A
 * refusal of the rules keeps its status and words, with a `_tip` that nothing was kept.
 */
async function undone(deps: Deps, projectId: string, written: number, err: unknown): Promise<unknown> {
  try {
    await removeImport(deps, projectId)
  } catch (removal) {
    // left to the clean-up loop (src/projects/importing.ts): the project stays invisible until it is removed
    deps.log.error('import: removing the unfinished project failed; the clean-up loop will', { projectId, error: String(removal) })
  }
  const tip = `Nothing of this import was kept: project ${projectId} and the ${written} of its entries already written were removed. Fix the bundle and import it again.`
  if (err instanceof ErrorListError) return new ErrorListError(err.errors, { ...err.meta, _tip: tip }, err.status, err.retryAfter)
  if (err instanceof RefusalError) return new RefusalError(err.status, err.error, { ...err.extra, _tip: tip })
  return err
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
