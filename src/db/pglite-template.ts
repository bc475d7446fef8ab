import { MemoryFS } from '@electric-sql/pglite'

/** Where PGlite keeps its cluster in its Emscripten file system (PGDATA of @electric-sql/pglite). */
const PGDATA = '/pglite/data'

/**
 * An in-memory PGlite file system whose cluster is the files of a dump's tar (`dump()`: ustar
 * headers, regular files and directories, names under 100 bytes), each file's contents a view
 * of `tar` itself: nothing is copied, and PostgreSQL writes a page in place, where it lands in
 * `tar`. So one `tar` serves one database: give each a copy, or a private mapping of the dump's
 * file (`Bun.mmap(path, { shared: false })`: copy-on-write, only the pages a database touches
 * are read and copied). PGlite's own `loadDataDir` parses the tar in JavaScript and copies every
 * file twice, 42 MB for our migrated cluster: PGlite.create took 0.3-0.6 s of CPU more that way,
 * and a test file's start (startApp) about 0.24 s more.
 */
export class TarViewFS extends MemoryFS {
  constructor(private readonly tar: Uint8Array) {
    super()
  }

  /** PGlite calls this before it looks for PGDATA/PG_VERSION: it then starts on these files, as on a cluster found on disk. */
  override async initialSyncFs(): Promise<void> {
    // biome-ignore lint/suspicious/noExplicitAny: PGlite types its Emscripten module loosely (pg.Module.FS)
    const FS = (this as any).pg.Module.FS
    const made = new Set<string>()
    const dir = (path: string) => {
      if (made.has(path)) return
      made.add(path)
      if (!FS.analyzePath(path).exists) FS.mkdirTree(path)
    }
    for (const entry of tarEntries(this.tar)) {
      const path = `${PGDATA}/${entry.name}`
      if (entry.type === '5') dir(path)
      else if (entry.type === '0') {
        dir(path.slice(0, path.lastIndexOf('/')))
        FS.writeFile(path, entry.data, { canOwn: true })
      } else throw new Error(`PGlite template: ${entry.name} is neither a file nor a directory (type ${entry.type})`)
    }
  }
}

/** The entries of a ustar archive as `dump()` writes it: name (without the leading slash), type flag, and a view of the data. */
function* tarEntries(tar: Uint8Array): Generator<{ name: string; type: string; data: Uint8Array }> {
  const text = new TextDecoder()
  const field = (at: number, length: number) => {
    const end = tar.subarray(at, at + length).indexOf(0)
    return text.decode(tar.subarray(at, end < 0 ? at + length : at + end))
  }
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const name = field(at, 100)
    // a name of 100 bytes or more would go on in the header's prefix field, which dump() does not write
    if (name.length >= 100) throw new Error(`PGlite template: a name too long for this reader: ${name}`)
    const size = Number.parseInt(field(at + 124, 12).trim() || '0', 8)
    const type = String.fromCharCode(tar[at + 156]!)
    at += 512
    yield { name: name.replace(/^\/+|\/+$/g, ''), type, data: tar.subarray(at, at + size) }
    at += Math.ceil(size / 512) * 512
  }
}
