// Writes the API's OpenAPI document, as GET /openapi.json serves it, without a network server:
// the real app is built in-process on an in-memory embedded database and asked once.
//   bun examples/typed-client/openapi-spec.ts [out.json]   (stdout without a file)
// The generated client (examples/typed-client/generated) is made from this file; CI regenerates
// both and fails if they differ from what is committed.
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createDeps } from '../../src/create-deps'
import { openDb } from '../../src/db'
import { createLogger } from '../../src/log'

const config = loadConfig({ DATABASE_URL: 'memory://', LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://localhost:3000' })
const db = await openDb(config)
const deps = createDeps({ config, db, log: createLogger(config.logLevel) })
const res = await createApp(deps).handle(new Request('http://localhost:3000/openapi.json'), '127.0.0.1')
if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`)
const text = `${JSON.stringify(await res.json(), null, 2)}\n`
await deps.search.stop?.()
await db.close()
const out = process.argv[2]
if (out) await Bun.write(out, text)
else process.stdout.write(text)
process.exit(0)
