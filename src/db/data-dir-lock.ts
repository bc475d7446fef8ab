import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'

/**
 * PGlite runs PostgreSQL in single-user mode inside this process and takes no lock on its
 * directory; two processes on one directory corrupt it. So we hold a lock file with our pid:
 * a second process fails fast, and a lock left by a dead process is taken over.
 */
export class DataDirLockedError extends Error {}

/** Take `dataDir`'s lock file (`arbor.lock`, our pid in it); returns its path. */
export function acquireLock(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true })
  const lockPath = join(dataDir, 'arbor.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return lockPath
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      refuseLocked(dataDir)
      rmSync(lockPath, { force: true }) // stale: its owner is gone
    }
  }
  throw new DataDirLockedError(`could not take the lock on ${lockPath}`)
}

/** A DataDirLockedError when another live process holds `dataDir`'s lock; nothing is taken or created. */
export function refuseLocked(dataDir: string): void {
  let pid: number
  try {
    pid = Number(readFileSync(join(dataDir, 'arbor.lock'), 'utf8').trim())
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  if (pid && pid !== process.pid && isAlive(pid))
    throw new DataDirLockedError(
      `DATA_DIR ${resolve(dataDir)} is in use by another Arbor process (pid ${pid}); stop it first, or set DATA_DIR to another directory`,
    )
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
