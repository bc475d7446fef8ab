import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Where a running server on an embedded database listens, kept beside its lock in DATA_DIR
 * (`arbor.address`, `{pid, url}`): `arbor doctor` and `arbor restore` run in another shell, whose
 * PORT may not be the server's, and still find it (issue 55). Written once the server listens,
 * removed when it stops; a file left by a crash names a pid that is gone, and readers check that.
 */
const NAME = 'arbor.address'

export interface ServerAddress {
  pid: number
  url: string
}

export function writeAddress(dataDir: string, url: string): void {
  writeFileSync(join(dataDir, NAME), `${JSON.stringify({ pid: process.pid, url })}\n`)
}

/** Removes the file when it is this process's (a second server never removes the first one's). */
export function removeAddress(dataDir: string): void {
  if (readAddress(dataDir)?.pid === process.pid) rmSync(join(dataDir, NAME), { force: true })
}

/** The address a server wrote in `dataDir`, or null when there is none or it cannot be read. */
export function readAddress(dataDir: string): ServerAddress | null {
  let text: string
  try {
    text = readFileSync(join(dataDir, NAME), 'utf8')
  } catch {
    return null // no server wrote one (or it stopped): nothing to report
  }
  try {
    const value = JSON.parse(text) as Partial<ServerAddress>
    return typeof value.pid === 'number' && typeof value.url === 'string' ? { pid: value.pid, url: value.url } : null
  } catch {
    return null // cut short by a crash mid-write: as good as none
  }
}
