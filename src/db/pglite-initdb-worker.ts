// Creates a new PGlite data directory (initdb) on a thread of its own: see initDataDir in pglite.ts.
import { PGlite } from '@electric-sql/pglite'
import { pgliteAssets } from './pglite-assets'

declare const self: Worker

self.onmessage = async (event: MessageEvent<{ pgdata: string; startParams: string[] }>) => {
  try {
    const pg = await PGlite.create({
      ...(await pgliteAssets({ initdb: true })),
      startParams: event.data.startParams,
      dataDir: event.data.pgdata,
    })
    await pg.query('checkpoint')
    await pg.close()
    self.postMessage({ ok: true })
  } catch (err) {
    self.postMessage({ ok: false, error: String((err as Error)?.message ?? err) })
  }
}
