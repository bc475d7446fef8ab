import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Config } from '../config'
import { BundleError, parseBundle } from '../export/parse'
import { CliError, parse, URL_OPTION } from './args'
import { connect, serverUrl } from './server-api'

/**
 * `arbor import PATH --key KEY [--name NAME]`: an OKF bundle (a directory of its files, or the
 * JSON that GET /export-okf answers) becomes a new project of the key's user, through the
 * public API of the running server: one batch, node ids kept, so links between them hold.
 */
const MAX_BATCH = 1000

export async function importCommand(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv, { ...URL_OPTION, key: { type: 'string' }, name: { type: 'string' } }, { min: 1, max: 1 })
  if (!values.key) throw new CliError('--key is required: the API key of the user who will own the new project')
  let bundle: ReturnType<typeof parseBundle>
  try {
    bundle = parseBundle(readBundle(positionals[0]!))
  } catch (err) {
    if (err instanceof BundleError) throw new CliError(err.message)
    throw err
  }
  const name = values.name ?? bundle.name
  const server = connect(serverUrl(config, values.url), values.key)
  const iterations = [...new Set(bundle.nodes.map((n) => n.data.iteration).filter((i): i is string => typeof i === 'string'))]
  const { project } = await server.call<{ project: { id: string } }>('POST', '/api/v1/mutate', {
    action: 'addProject',
    project: { name, id: projectId(name) },
  })
  const mutations = [
    ...iterations.filter((i) => i !== 'Later').map((i) => ({ action: 'addIteration', iteration: { name: i } })),
    ...bundle.nodes.map((node) => ({ action: 'add', node })),
  ]
  if (mutations.length > MAX_BATCH)
    throw new CliError(`the bundle has ${bundle.nodes.length} nodes; one import takes at most ${MAX_BATCH} (nodes and iterations together)`)
  await server.call('POST', '/api/v1/mutate', { action: 'batch', projectId: project.id, mutations })
  console.log(`imported ${bundle.nodes.length} nodes into project ${project.id} (${name})`)
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

function readBundle(path: string): Record<string, string> {
  if (!existsSync(path)) throw new CliError(`no such file or directory: ${path}`)
  if (statSync(path).isDirectory()) {
    const files: Record<string, string> = {}
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = join(dir, entry.name)
        if (entry.isDirectory()) walk(full)
        else if (entry.name.endsWith('.md')) files[relative(path, full)] = readFileSync(full, 'utf8')
      }
    }
    walk(path)
    return files
  }
  let json: { files?: Record<string, string> }
  try {
    json = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    throw new CliError(`${path} is neither a directory of OKF files nor the JSON of GET /export-okf`)
  }
  if (!json.files || typeof json.files !== 'object') throw new CliError(`${path} has no files: expected the JSON of GET /export-okf`)
  return json.files
}
