// The smoke check scripts/image-size.sh runs against a server started from the reproduced image
// tree: it answers, searches by meaning with the sentence model, serves the app, /docs and
// /openapi.json, and counts outline tokens (gpt-tokenizer). Exits 1 with the reason otherwise.
//   bun scripts/image-smoke.ts <base url> <server log> <label>
import { readFileSync } from 'node:fs'

const [base, logFile, label] = process.argv.slice(2)
if (!base || !logFile) throw new Error('usage: bun scripts/image-smoke.ts <base url> <server log> <label>')
const fail = (why: string): never => {
  console.error(`smoke (${label}): ${why}`)
  process.exit(1)
}
const deadline = (s: number) => Date.now() + s * 1000

for (const until = deadline(60); ; await Bun.sleep(250)) {
  const ok = await fetch(`${base}/healthz`).then(
    (r) => r.ok,
    () => false,
  )
  if (ok) break
  if (Date.now() > until) fail('no /healthz within 60 s')
}
const key = /Arbor API key for owner: (arb_\w+)/.exec(readFileSync(logFile, 'utf8'))?.[1] ?? fail('no owner key in the log')
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as any }
}

await call('POST', '/mutate', { action: 'addProject', project: { name: 'Smoke', id: 'smoke' } })
const labels = [
  'Payers in the eurozone can pay by SEPA Direct Debit',
  'Renew the TLS certificate of the marketing site',
  'Invoices can be produced in German, French, Spanish or Dutch',
]
const added = await call('POST', '/mutate', {
  action: 'batch',
  projectId: 'smoke',
  mutations: labels.map((label) => ({ action: 'add', node: { type: 'task', data: { label } } })),
})
if (!added.body.success) fail(`batch: ${JSON.stringify(added.body)}`)
// no word in common with the SEPA node: only a meaning match ranks it first
const q = encodeURIComponent('European customers authorise pulling money from their account')
for (const until = deadline(120); ; await Bun.sleep(500)) {
  const { body } = await call('GET', `/search?projectId=smoke&limit=3&q=${q}`)
  if (body._meta?.search?.semantic === 'full') {
    if (body._meta.search.embedder !== 'minilm-l6-v2-int8-v1-aq8') fail(`embedder ${JSON.stringify(body._meta.search)}`)
    if (body.results[0]?.node.data.label !== labels[0]) fail(`top result ${JSON.stringify(body.results[0])}`)
    console.log(`    search by meaning on ${body._meta.search.embedder}: top result right`)
    break
  }
  if (Date.now() > until) fail(`semantic search never became available: ${JSON.stringify(body._meta)}`)
}
const outline = await call('GET', '/outline?projectId=smoke')
if (outline.status !== 200 || !(outline.body.tokens > 0)) fail(`outline: ${JSON.stringify(outline)}`)
console.log(`    outline: ${outline.body.tokens} o200k_base tokens`)
for (const path of ['/app/app.js', '/docs', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/openapi.json']) {
  const res = await fetch(`${base}${path}`)
  if (res.status !== 200) fail(`GET ${path} -> ${res.status}`)
  console.log(`    GET ${path} -> 200, ${(await res.arrayBuffer()).byteLength} bytes`)
}
console.log(`smoke (${label}): passed`)
