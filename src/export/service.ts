import { Document, parse, stringify, visit } from 'yaml'
import type { User } from '../accounts/model'
import type { Deps } from '../deps'
import { RefusalError } from '../errors'
import { afterAccess, ProjectQuery } from '../http/action-schema'
import { requireProject } from '../projects/access'
import { FRONTMATTER_KEYS as CUSTOM_KEYS } from './fields'
import { LINE_BREAK } from './parse'
import { listNodes, type NodeRow } from './queries'

/**
 * The Open Knowledge Format (OKF v0.1) bundle of a project: one markdown file per node with
 * YAML frontmatter, and an index. Frontmatter is written by a YAML library, never by string
 * concatenation, so a label with quotes, colons or newlines still parses back to itself.
 */
export const OKF_VERSION = '0.1' as const

type NodeType = NodeRow['type']
const ORDER: NodeType[] = ['goal', 'need', 'approach', 'job', 'task']
const FOLDER: Record<NodeType, string> = { goal: 'goals', need: 'needs', approach: 'approaches', job: 'jobs', task: 'tasks' }
const TYPE_NAME: Record<NodeType, string> = { goal: 'Goal', need: 'Need', approach: 'Approach', job: 'Job', task: 'Task' }
const HEADING: Record<NodeType, string> = { goal: 'Goals', need: 'Needs', approach: 'Approaches', job: 'Jobs', task: 'Tasks' }

export const pathOf = (n: Pick<NodeRow, 'id' | 'type'>) => `${FOLDER[n.type]}/${n.id}.md`

/** Text safe inside a heading or a link's brackets: one line, markdown punctuation escaped. */
export function inline(text: unknown): string {
  return String(text ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`)
}

/**
 * Text written exactly in one line of a list (an external reference's system and key, a demand's
 * who, date and ask): markdown punctuation and the backslash escaped, and each whitespace
 * character but the space written as `\u{hex}` (a space as `\ ` when `space`), so the import
 * (parse.ts, `unescapeText`) reads back the very text, newlines included.
 */
export function exact(text: unknown, space = false): string {
  return String(text ?? '').replace(/[\\`*_[\]<>#|()]|\s/g, (c) =>
    c === ' ' ? (space ? '\\ ' : ' ') : /\s/.test(c) ? `\\u{${c.codePointAt(0)!.toString(16)}}` : `\\${c}`,
  )
}

/**
 * A block of free text in a file's body (a description, notes), escaped so that no line reads as
 * the file's structure: a backslash goes before every line that starts with one, with `#` (a
 * heading: `## Blocked by` would become a relation) or that is empty and first or last (the
 * import trims the blank lines around a section). The import takes one leading backslash off
 * each line (parse.ts, `unescapeBlock`).
 */
export function block(text: string): string {
  // lines as the import's section headings see them: after any line terminator, \r and U+2028 too
  const parts = text.split(LINE_BREAK)
  return parts
    .map((part, i) =>
      i % 2 === 1 ? part : /^[\\#]/.test(part) || (part === '' && (i === 0 || i === parts.length - 1)) ? `\\${part}` : part,
    )
    .join('')
}

/**
 * A block scalar does not keep a line of only spaces (YAML reads it as an empty line): a text that
 * would not parse back to itself is written double-quoted, with escapes, instead. Only texts that
 * span lines or have whitespace at an end are tried.
 */
const readsBack = (text: string) => parse(stringify({ v: text }, { lineWidth: 0 })).v === text
const frontmatter = (data: Record<string, unknown>) => {
  const doc = new Document(data)
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === 'string' && /[\n\r\u0085\u2028\u2029]|^\s|\s$/.test(node.value) && !readsBack(node.value))
        node.type = 'QUOTE_DOUBLE'
    },
  })
  return `---\n${doc.toString({ lineWidth: 0 })}---\n`
}

function nodeFile(n: NodeRow, byId: Map<string, NodeRow>, children: NodeRow[]): string {
  const d = n.data
  const meta: Record<string, unknown> = { type: TYPE_NAME[n.type], title: String(d.label ?? '') }
  if (typeof d.description === 'string') meta.description = d.description
  meta.timestamp = new Date(n.created_at).toISOString()
  for (const key of CUSTOM_KEYS) if (d[key] !== undefined && d[key] !== null) meta[key] = d[key]
  meta.id = n.id

  // links are relative to this file's folder: ../<folder>/<id>.md
  const link = (id: string) => {
    const target = byId.get(id)
    return target ? `[${inline(target.data.label)}](../${pathOf(target)})` : `${inline(id)} (not in this project)`
  }
  const sections: string[] = [`# ${inline(d.label)}`]
  if (d.description) sections.push(block(String(d.description)))
  if (d.notes) sections.push(`## Notes\n\n${block(String(d.notes))}`)
  if (n.parent_id) sections.push(`## Parent\n\n- ${link(n.parent_id)}`)
  const list = (title: string, ids: unknown) =>
    Array.isArray(ids) && ids.length ? sections.push(`## ${title}\n\n${ids.map((id) => `- ${link(String(id))}`).join('\n')}`) : 0
  list('Blocked by', d.blockedBy)
  list('Serves', d.serves)
  if (children.length) sections.push(`## Children\n\n${children.map((c) => `- ${link(c.id)}`).join('\n')}`)
  if (Array.isArray(d.externalRefs) && d.externalRefs.length)
    sections.push(
      `## External references\n\n${d.externalRefs.map((r) => `- ${exact(r.system, true)} ${exact(r.key)}: <${String(r.url).replace(/[<>\s]/g, encodeURIComponent)}>`).join('\n')}`,
    )
  if (Array.isArray(d.demand) && d.demand.length)
    sections.push(`## Demand\n\n${d.demand.map((e) => `- ${exact(e.who)} (${exact(e.at)})${e.ask ? `: ${exact(e.ask)}` : ''}`).join('\n')}`)
  return `${frontmatter(meta)}\n${sections.join('\n\n')}\n`
}

function indexFile(project: { id: string; name: string }, nodes: NodeRow[], now: Date): string {
  const meta = { okf_version: Number(OKF_VERSION), type: 'Index', title: project.name, project: project.id, timestamp: now.toISOString() }
  const sections = [`# ${inline(project.name)}`]
  for (const type of ORDER) {
    const ofType = nodes.filter((n) => n.type === type)
    const items = ofType.length ? ofType.map((n) => `- [${inline(n.data.label)}](${pathOf(n)})`).join('\n') : '_None._'
    sections.push(`## ${HEADING[type]}\n\n${items}`)
  }
  return `${frontmatter(meta)}\n${sections.join('\n\n')}\n`
}

/** GET /export-okf: the whole project as files keyed by path. */
export async function exportOkf(deps: Deps, user: User, query: unknown) {
  const { project } = await afterAccess(
    (projectId) =>
      requireProject(deps, user, projectId, {
        unknown: () => new RefusalError(400, 'unknown_project', { message: `Project ${projectId} not found` }),
      }),
    'query',
    ProjectQuery,
    query,
  )
  // the bundle's timestamp says when it was made: a kept one is made again after a minute
  return deps.reads.answer(project.id, 'export-okf', { ttlMs: 60_000 }, () => bundle(deps, project))
}

async function bundle(deps: Deps, project: { id: string; name: string }) {
  const nodes = await listNodes(deps.db, project.id)
  const byId = new Map(nodes.map((n) => [n.id, n]))
  const children = new Map<string, NodeRow[]>()
  for (const n of nodes) if (n.parent_id) children.set(n.parent_id, [...(children.get(n.parent_id) ?? []), n])

  const files: Record<string, string> = { 'index.md': indexFile(project, nodes, deps.now()) }
  for (const n of nodes) files[pathOf(n)] = nodeFile(n, byId, children.get(n.id) ?? [])
  return {
    okf_version: OKF_VERSION,
    project: { id: project.id, name: project.name },
    file_count: Object.keys(files).length,
    files,
    _meta: { _tip: 'Write each entry of files to its path to get the bundle; index.md lists every concept by type.' },
  }
}

// The node rows an export reads, which the share view reads too: this module's public surface.
export type { NodeRow }
export { listNodes }
