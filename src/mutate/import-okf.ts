import { type Static, Type } from '@sinclair/typebox'
import { authChanged } from '../accounts/auth-cache'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { ErrorListError, invalid, RefusalError } from '../errors'
import { ENTRY_BLOCK } from '../export/entries'
import { BundleError, type ReadBundle, readBundleOffThread } from '../export/parse'
import { requireProject } from '../projects/access'
import { beginImport, giveWay, importLease, removeImport, renewImport } from '../projects/importing'
import { checkedBatch, checkedBody } from './check'
import { runBatch, runWrite } from './sequence'
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
/** POST /import-okf's body, checked by checkInput in the route. */
export const ImportBody = Type.Object(
  {
    files: Type.Record(Type.String(), Type.String(), { description: 'path → markdown, as GET /export-okf answers them' }),
    name: Type.Optional(Type.String({ description: "the new project's name; the bundle's title when absent" })),
  },
  { additionalProperties: false },
)

export async function importOkf(deps: Deps, user: User, body: Static<typeof ImportBody>) {
  let bundle: ReadBundle
  try {
    // on a thread of its own: seconds of YAML for a large bundle
    bundle = await readBundleOffThread(body.files)
  } catch (err) {
    if (err instanceof BundleError) throw invalid(err.message)
    throw err
  }
  const name = body.name ?? bundle.name
  // the project's body checked as POST /mutate's addProject is (a blank name, the one sent or the
  // bundle's title, refused with its message; its length is addProject's own to refuse), with the bundle
  const addBody = checkedBody(actions.addProject, { action: 'addProject', project: { name, id: projectId(name) } })
  // the project first, in a transaction of its own, marked as the import's: nobody sees it until the end
  const project = await deps.db.tx(async (db) => {
    const { answer: added } = await runWrite({ ...deps, db }, actions.addProject, { user }, addBody)
    const project = added.project as { id: string; name: string }
    await beginImport(db, project.id, importLease(deps))
    return project
  })
  const own = { ...deps, importing: project.id }
  let written = 0
  let told = performance.now()
  try {
    // a batch writes in the project its caller asked: the import's own (src/projects/importing.ts), asked once for all its chunks
    const access = await requireProject(own, user, project.id)
    const pace = PACE[deps.db.kind]
    for (let block = 0, size = FIRST_CHUNK; block < bundle.blocks.length; ) {
      // a block's JSON is read only now: the serving thread never holds all the entries at once
      const chunk = bundle.blocks.slice(block, block + size / ENTRY_BLOCK).flatMap((text) => JSON.parse(text) as unknown[])
      const started = performance.now()
      await deps.db.tx(async (db) => {
        await moveLease(db, project.id, importLease(deps))
        // the chunk checked as a POST /mutate batch's body is (its node data with it), then written as a
        // batch inside the import, which weighs nothing: the import sizes its chunks itself (below)
        const body = checkedBatch({ action: 'batch', projectId: project.id, mutations: chunk })
        await runBatch({ ...own, db }, access, body)
      })
      block += size / ENTRY_BLOCK
      written += chunk.length
      const took = performance.now() - started
      if (performance.now() - told >= PROGRESS_MS || written === chunk.length) {
        told = performance.now()
        deps.log.info('import progress', { projectId: project.id, written, entries: bundle.entries })
      }
      // the next chunk sized to take about pace.ms, in whole blocks; then the others' turn (on PGlite for as long as this one held the database)
      const fit = Math.round((chunk.length * pace.ms) / Math.max(took, 1) / ENTRY_BLOCK) * ENTRY_BLOCK
      size = Math.max(MIN_CHUNK, Math.min(pace.max, fit))
      await giveWay(deps.db, pace.wait ? took : 0)
    }
    // the import's one commit as a user sees it: the project appears, whole
    await moveLease(deps.db, project.id, null)
  } catch (err) {
    throw await undone(deps, project.id, written, err)
  } finally {
    // reads may have cached the project as importing (or, undone, as existing)
    await authChanged(deps)
  }
  return {
    success: true as const,
    project,
    nodes: bundle.nodes,
    _meta: {
      _tip: `Imported ${bundle.nodes} nodes into project ${project.id}. Read them with GET /nodes?projectId=${project.id}.`,
    },
  }
}

/** The import's lease moved on (null: the import ends, the project appears), or 409 when its project was removed meanwhile. */
async function moveLease(db: Deps['db'], projectId: string, lease: Date | null): Promise<void> {
  if (!(await renewImport(db, projectId, lease)))
    throw new RefusalError(409, 'import_abandoned', { message: `Project ${projectId} was removed while the import wrote it` })
}

/** Entries of the first chunk; later ones are sized by the time the last took (all in whole blocks of ENTRY_BLOCK). */
const FIRST_CHUNK = 50
/** below this a chunk's own cost (its transaction, the lease, the batch's reads) would outweigh its entries */
const MIN_CHUNK = 50
/**
 * How long a chunk's transaction should take, its most entries, and whether the import then waits
 * as long as the chunk took (or until no other statement waits). PGlite has one session: a chunk
 * holds every other request, so its chunks are short and each is followed by the others' turn
 * (a 15,000-task import: the others' p99 7,508 → 170 ms, the import 9.9 → 29.6 s; bench:stall, a
 * loaded machine). PostgreSQL serves the others beside an open transaction: pacing it there only
 * made the import 12× slower (5.9 → 71.9 s) for no better p99 (385 → 435 ms), so its chunks are
 * the 1,000-entry batches the import always wrote, one after the other.
 */
const PACE = {
  pglite: { ms: 40, max: 200, wait: true },
  postgres: { ms: 1000, max: 1000, wait: false },
} as const
/** how often the log says how far an import is (and once after its first chunk) */
const PROGRESS_MS = 1000

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
