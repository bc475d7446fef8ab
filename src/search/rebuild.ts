// `bun run search:rebuild`: rebuild the search index from the database.
//  - MEILI_URL set: loads every node again (with vectors from the configured embedder) into a
//    side index, swaps it in and moves the sync cursor to the newest event, so the servers' sync
//    loops carry on from there. While a server holds the sync lease (PostgreSQL, servers
//    running) it asks that server to do it instead (docs/meilisearch.md).
//  - built-in backend: forgets the stored vectors of the configured embedder, so servers
//    re-embed in the background as they load each project (search answers by keyword
//    meanwhile and says so in _meta).
// Uses the same environment as the server (DATABASE_URL, DATA_DIR, MEILI_URL, EMBEDDINGS_*).
// With the embedded database, stop the server first: one process at a time owns DATA_DIR.

import { loadConfigOrExit } from '../config'
import { openDb } from '../db'
import { createLogger } from '../log'
import { chooseEmbedder } from './embedder/runtime'
import { MeiliBackend } from './meili'
import { forgetEmbedder } from './queries'

async function main() {
  const config = loadConfigOrExit()
  const db = await openDb(config)
  // what a backend is built from (SearchDeps); this command serves nothing and runs no loop
  const deps = { config, db, log: createLogger(config.logLevel) }
  const choice = chooseEmbedder(config)
  try {
    if (config.meiliUrl) {
      const done = await new MeiliBackend(deps, choice).rebuild((m) => console.log(m))
      if ('rebuilt' in done) console.log(`rebuilt the Meilisearch index from ${done.rebuilt} nodes`)
      else
        console.log(
          'a server holds the Meilisearch sync lease: dropped the index embedder, so that server rebuilds the index from the database within seconds (searching by keyword meanwhile)',
        )
    } else {
      const id = choice.embedder.id
      await forgetEmbedder(db, id)
      console.log(
        `forgot the stored vectors of ${id}: servers re-embed each project in the background as they load it (restart them to start at once)`,
      )
    }
  } finally {
    await db.close()
  }
}

await main()
