import { parse as parseYaml } from 'yaml'
import { badString } from '../http/input-guard'
import { FRONTMATTER_KEYS } from './fields'

/**
 * The inverse of the OKF export (service.ts): the files of a bundle back into the nodes a batch
 * `add` takes, ids kept (`arbor import`). What the export writes only in markdown (parent,
 * blocked-by and serves links, notes, external references, demand) is read back from its
 * sections; the frontmatter gives the rest as it was.
 */
export interface ImportedNode {
  id: string
  type: 'goal' | 'need' | 'approach' | 'job' | 'task'
  parentId?: string
  data: Record<string, unknown>
  /** a task's kind as exported, and its urgent flag (valid only beside kind do-it): set by an update after the add */
  kind?: unknown
  urgent?: unknown
}

export class BundleError extends Error {}

const TYPES: Record<string, ImportedNode['type']> = { Goal: 'goal', Need: 'need', Approach: 'approach', Job: 'job', Task: 'task' }
const ORDER = ['goal', 'need', 'approach', 'job', 'task']
/** the export's custom keys an add takes; `kind` and `urgent` are set by an update (src/mutate/import-okf.ts) */
const CUSTOM_KEYS = FRONTMATTER_KEYS.filter((key) => key !== 'kind' && key !== 'urgent')
/**
 * YAML is read with the core schema and few aliases: a frontmatter of nodes does not need them,
 * and a "billion laughs" of nested aliases must fail at once rather than fill memory.
 */
const YAML_OPTIONS = { schema: 'core', maxAliasCount: 20, uniqueKeys: true, prettyErrors: false } as const
/** bounds on what one bundle may hold, far above any project the API allows */
const MAX_FILES = 20_000
const MAX_FRONTMATTER = 64 * 1024

/** The inverse of the export's `exact` (and of its older `inline`): `\u{hex}` is that character, `\x` is x. */
const unescapeMd = (text: string) =>
  text.replace(/\\(u\{[0-9a-f]{1,6}\}|[\s\S])/g, (_, c: string) =>
    c.length > 1 ? String.fromCodePoint(Number.parseInt(c.slice(2, -1), 16)) : c,
  )
/** The inverse of the export's `block`: one leading backslash off each line that has one. */
const unescapeBlock = (text: string) =>
  text
    .split(LINE_BREAK)
    .map((part, i) => (i % 2 === 0 && part.startsWith('\\') ? part.slice(1) : part))
    .join('')
/** What ends a line for the sections' headings (`^` of a multiline RegExp), kept by split: lines at even places. */
export const LINE_BREAK = /(\r\n|[\n\r\u2028\u2029])/
/** `[label](../tasks/task-3.md)` → task-3; a reference the export marked "not in this project" → none */
const linkedIds = (section: string | undefined) =>
  (section ?? '')
    .split('\n')
    .map((line) => /^- \[.*\]\(\.\.\/[a-z]+\/([^/)]+)\.md\)$/.exec(line)?.[1])
    .filter((id): id is string => !!id)

function split(path: string, text: string): { meta: Record<string, unknown>; sections: Map<string, string> } {
  // the frontmatter ends at the first line that is `---` itself: a title ending in --- does not end it
  const m = /^---\n(?:([\s\S]*?)\n)?---\n([\s\S]*)$/.exec(text)
  if (!m) throw new BundleError(`${path}: no YAML frontmatter`)
  m[1] ??= ''
  if (m[1]!.length > MAX_FRONTMATTER) throw new BundleError(`${path}: a frontmatter longer than ${MAX_FRONTMATTER / 1024} KiB`)
  let meta: unknown
  try {
    meta = parseYaml(m[1]!, YAML_OPTIONS)
  } catch (err) {
    // the YAML library's errors (YAMLParseError, an alias bomb's ReferenceError): their first line is the cause
    throw new BundleError(`${path}: invalid YAML frontmatter: ${String((err as Error).message).split('\n')[0]}`)
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta))
    throw new BundleError(`${path}: the YAML frontmatter must be a mapping of keys (type, title, id…)`)
  // a YAML escape ("a\0b", "\uD800") makes what the input guard refused in the JSON that carried the file
  const bad = badString(meta)
  if (bad) throw new BundleError(`${path}: ${bad.message}`)
  const sections = new Map<string, string>()
  const parts = m[2]!.split(/^## (.+)$/m)
  for (let i = 1; i < parts.length; i += 2) sections.set(parts[i]!, parts[i + 1]!.replace(/^\n+|\n+$/g, ''))
  return { meta: meta as Record<string, unknown>, sections }
}

/** The bundle's project name and nodes, parents before children. */
export function parseBundle(files: Record<string, string>): { name: string; nodes: ImportedNode[] } {
  const { indexMeta, paths } = openBundle(files)
  return closeBundle(
    indexMeta,
    paths.map((path) => nodeOf(path, files[path]!)),
  )
}

/** The worker's module; in the single executable it sits at its path under src/ (src/binary.ts). */
function parseWorkerUrl(): string {
  if (import.meta.url.startsWith('file:///$bunfs/')) return new URL('./export/parse-worker.ts', import.meta.url).href
  return new URL('./parse-worker.ts', import.meta.url).href
}

/** A bundle read for an import: its project name, its node count, and the entries that write it (entries.ts). */
export interface ReadBundle {
  name: string
  nodes: number
  /** how many batch entries write it */
  entries: number
  /** the batch entries, ENTRY_BLOCK to a block, each block a JSON text */
  blocks: string[]
}

/**
 * parseBundle and the import's entries for the server, on a worker thread of its own
 * (parse-worker.ts) that ends with it: the same BundleError, while the thread that serves
 * requests goes on serving them.
 */
export async function readBundleOffThread(files: Record<string, string>): Promise<ReadBundle> {
  const worker = new Worker(parseWorkerUrl())
  try {
    const reply = await new Promise<{ bundle?: ReadBundle; refused?: string; failed?: string }>((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data)
      worker.onerror = (event) => reject(new Error(`the bundle reader's worker failed: ${event.message}`))
      worker.postMessage(JSON.stringify(files))
    })
    if (reply.refused !== undefined) throw new BundleError(reply.refused)
    if (!reply.bundle) throw new Error(`the bundle reader's worker failed: ${reply.failed}`)
    return reply.bundle
  } finally {
    worker.terminate()
  }
}

function openBundle(files: Record<string, string>) {
  if (typeof files !== 'object' || files === null || Array.isArray(files)) throw new BundleError('files must map each path to its text')
  const paths = Object.keys(files)
  if (paths.length > MAX_FILES) throw new BundleError(`the bundle has ${paths.length} files; at most ${MAX_FILES} are read`)
  const notText = paths.find((path) => typeof files[path] !== 'string')
  if (notText !== undefined) throw new BundleError(`${notText}: a file's content must be text`)
  const index = Object.hasOwn(files, 'index.md') ? files['index.md'] : undefined
  if (!index) throw new BundleError('the bundle has no index.md')
  const { meta: indexMeta } = split('index.md', index)
  if (String(indexMeta.okf_version) !== '0.1')
    throw new BundleError(`index.md declares okf_version ${indexMeta.okf_version}; this Arbor reads 0.1`)
  return { indexMeta, paths: paths.filter((path) => path !== 'index.md') }
}

function nodeOf(path: string, text: string): ImportedNode {
  const { meta, sections } = split(path, text)
  const type = Object.hasOwn(TYPES, String(meta.type)) ? TYPES[String(meta.type)] : undefined
  if (!type || typeof meta.id !== 'string') throw new BundleError(`${path}: frontmatter needs a type (Goal … Task) and an id`)
  const data: Record<string, unknown> = { label: meta.title }
  if (typeof meta.description === 'string') data.description = meta.description
  if (sections.has('Notes')) data.notes = unescapeBlock(sections.get('Notes')!)
  for (const key of CUSTOM_KEYS) if (meta[key] !== undefined) data[key] = meta[key]
  const blockedBy = linkedIds(sections.get('Blocked by'))
  if (blockedBy.length) data.blockedBy = blockedBy
  const serves = linkedIds(sections.get('Serves'))
  if (serves.length) data.serves = serves
  const refs = (sections.get('External references') ?? '').split('\n').flatMap((line) => {
    const r = /^- ((?:\\.|\S)+) (.*): <(.*)>$/.exec(line)
    return r ? [{ system: unescapeMd(r[1]!), key: unescapeMd(r[2]!), url: r[3]! }] : []
  })
  if (refs.length) data.externalRefs = refs
  const demand = (sections.get('Demand') ?? '').split('\n').flatMap((line) => {
    const d = /^- (.*?) \(((?:\\.|[^()])*)\)(?:: (.*))?$/.exec(line)
    return d ? [{ who: unescapeMd(d[1]!), at: unescapeMd(d[2]!), ...(d[3] ? { ask: unescapeMd(d[3]) } : {}) }] : []
  })
  if (demand.length) data.demand = demand
  const [parentId] = linkedIds(sections.get('Parent'))
  const flags = { ...(meta.kind !== undefined ? { kind: meta.kind } : {}), ...(meta.urgent !== undefined ? { urgent: meta.urgent } : {}) }
  return { id: meta.id, type, ...(parentId ? { parentId } : {}), data, ...flags }
}

function closeBundle(indexMeta: Record<string, unknown>, nodes: ImportedNode[]): { name: string; nodes: ImportedNode[] } {
  // parents first: a parent is always of an earlier type; within a type, the export's creation order (by number)
  const num = (id: string) => Number(/-(\d+)$/.exec(id)?.[1] ?? 0)
  nodes.sort((a, b) => ORDER.indexOf(a.type) - ORDER.indexOf(b.type) || num(a.id) - num(b.id))
  return { name: String(indexMeta.title ?? 'Imported project'), nodes }
}
