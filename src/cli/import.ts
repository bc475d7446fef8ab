import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import type { Config } from '../config'
import { BundleError, parseBundle } from '../export/parse'
import { CliError, parse, URL_OPTION } from './args'
import { connect, serverUrl } from './server-api'

/**
 * `arbor import PATH --key KEY [--name NAME]`: an OKF bundle (a directory of its files, or the
 * JSON that GET /export-okf answers) becomes a new project of the key's user, through the
 * running server's POST /import-okf: the project and every node (ids kept, so links between
 * them hold, and each task's kind), all or nothing (written in chunks, the project shown only
 * once whole: src/mutate/import-okf.ts), so a refused bundle leaves nothing.
 */
export async function importCommand(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv, { ...URL_OPTION, key: { type: 'string' }, name: { type: 'string' } }, { min: 1, max: 1 })
  if (!values.key) throw new CliError('--key is required: the API key of the user who will own the new project')
  const files = readBundle(positionals[0]!)
  try {
    parseBundle(files) // the server reads it again; a broken bundle is named here without a round trip
  } catch (err) {
    if (err instanceof BundleError) throw new CliError(err.message)
    throw err
  }
  const server = connect(serverUrl(config, values.url), values.key)
  const { project, nodes } = await server.call<{ project: { id: string; name: string }; nodes: number }>('POST', '/api/v1/import-okf', {
    files,
    ...(values.name !== undefined ? { name: values.name } : {}),
  })
  console.log(`imported ${nodes} nodes into project ${project.id} (${project.name})`)
}

/** The bundle's files by path: a directory's .md files, or the `files` of an export's JSON. */
function readBundle(path: string): Record<string, string> {
  if (!existsSync(path)) throw new CliError(`no such file or directory: ${path}`)
  const stat = statSync(path)
  if (stat.isDirectory()) return readDirectory(path)
  // a FIFO, a socket or a device would be read for ever (or block until something writes to it)
  if (!stat.isFile()) throw new CliError(`${path} is not a regular file or a directory: refused`)
  let json: unknown
  try {
    json = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    throw new CliError(`${path} is neither a directory of OKF files nor the JSON of GET /export-okf`)
  }
  const files = (json as { files?: unknown } | null)?.files
  if (!files || typeof files !== 'object' || Array.isArray(files))
    throw new CliError(`${path} has no files: expected the JSON of GET /export-okf`)
  return files as Record<string, string>
}

/**
 * The .md files under `root`. A symbolic link is followed only while it stays inside the bundle:
 * one that leads elsewhere on the machine (or nowhere) is refused, so an import never reads a file
 * the bundle does not hold. Only regular files are read (a FIFO would wait for ever).
 */
function readDirectory(root: string): Record<string, string> {
  const realRoot = realpathSync(root)
  const inside = (real: string) => real === realRoot || real.startsWith(realRoot + sep)
  const files: Record<string, string> = {}
  const seen = new Set<string>()
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name)
      const name = relative(root, full)
      let real = full
      if (entry.isSymbolicLink()) {
        try {
          real = realpathSync(full)
        } catch {
          throw new CliError(`${name}: a symbolic link to nothing: refused`)
        }
        if (!inside(real)) throw new CliError(`${name}: a symbolic link to ${real}, outside the bundle: refused`)
      }
      const stat = statSync(real)
      if (stat.isDirectory()) {
        if (seen.has(real)) continue // a link back to a folder already read
        seen.add(real)
        walk(full)
      } else if (entry.name.endsWith('.md')) {
        if (!stat.isFile()) throw new CliError(`${name}: not a regular file: refused`)
        files[name] = readFileSync(real, 'utf8')
      }
    }
  }
  seen.add(realRoot)
  walk(root)
  return files
}
