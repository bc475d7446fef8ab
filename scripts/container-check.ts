// The HTTP side of scripts/container-test.sh: each check asks a server in a container from outside,
// over its published port, and exits 1 with the reason when the answer is not what it must be.
//   bun scripts/container-check.ts health URL SECONDS          first 200 on /healthz; prints the seconds it took
//   bun scripts/container-check.ts write URL KEY PROJECT        a project and three tasks
//   bun scripts/container-check.ts read URL KEY PROJECT         the three tasks are there
//   bun scripts/container-check.ts meaning URL KEY PROJECT      search by meaning ranks the right task first
//   bun scripts/container-check.ts hold URL KEY PROJECT FILE    a long poll (GET /events?wait=60); writes its status to FILE when answered
//   bun scripts/container-check.ts createdb POSTGRES_URL NAME   a new database; prints its URL
import { writeFileSync } from 'node:fs'
import postgres from 'postgres'

const [command, base, ...args] = process.argv.slice(2)
const fail = (why: string): never => {
  console.error(`container-check ${command}: ${why}`)
  process.exit(1)
}
if (!command || !base) fail('usage: see the head of scripts/container-check.ts')

const LABELS = [
  'Payers in the eurozone can pay by SEPA Direct Debit',
  'Renew the TLS certificate of the marketing site',
  'Invoices can be produced in German, French, Spanish or Dutch',
]
// no word in common with the SEPA task: only a match by meaning ranks it first
const MEANING = 'European customers authorise pulling money from their account'

async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    fail(`${method} ${path} -> ${res.status}, not JSON: ${text.slice(0, 200)}`)
  }
  return { status: res.status, body: json }
}

switch (command) {
  case 'health': {
    const started = Date.now()
    const until = started + Number(args[0] ?? 60) * 1000
    for (;;) {
      const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.status === 200,
        () => false,
      )
      if (ok) break
      if (Date.now() > until) fail(`no 200 from ${base}/healthz within ${args[0]} s`)
      await Bun.sleep(50)
    }
    console.log(((Date.now() - started) / 1000).toFixed(2))
    break
  }
  case 'write': {
    const [key, project] = args as [string, string]
    const added = await call(key, 'POST', '/mutate', { action: 'addProject', project: { name: `Container ${project}`, id: project } })
    if (added.status !== 200) fail(`addProject -> ${added.status} ${JSON.stringify(added.body)}`)
    const batch = await call(key, 'POST', '/mutate', {
      action: 'batch',
      projectId: project,
      mutations: LABELS.map((label) => ({ action: 'add', node: { type: 'task', data: { label } } })),
    })
    if (!batch.body.success) fail(`batch -> ${batch.status} ${JSON.stringify(batch.body)}`)
    console.log(`wrote project ${project} and ${LABELS.length} tasks through ${base}`)
    break
  }
  case 'read': {
    const [key, project] = args as [string, string]
    const res = await call(key, 'GET', `/nodes?projectId=${project}&type=task`)
    if (res.status !== 200) fail(`GET /nodes -> ${res.status} ${JSON.stringify(res.body)}`)
    const labels = (res.body.nodes as { data: { label: string } }[]).map((n) => n.data.label).sort()
    if (JSON.stringify(labels) !== JSON.stringify([...LABELS].sort())) fail(`the tasks read are ${JSON.stringify(labels)}`)
    console.log(`read the ${labels.length} tasks of ${project} through ${base}`)
    break
  }
  case 'meaning': {
    const [key, project] = args as [string, string]
    const until = Date.now() + 90_000
    for (;;) {
      const res = await call(key, 'GET', `/search?projectId=${project}&limit=3&q=${encodeURIComponent(MEANING)}`)
      const top = res.body.results?.[0]?.node?.data?.label
      if (res.status === 200 && res.body._meta?.search?.semantic === 'full' && top !== undefined) {
        if (top !== LABELS[0]) fail(`the top result by meaning was ${JSON.stringify(top)}`)
        console.log(`search by meaning through ${base} -> ${JSON.stringify(top)} (${JSON.stringify(res.body._meta.search)})`)
        break
      }
      if (Date.now() > until) fail(`search by meaning never answered: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`)
      await Bun.sleep(500)
    }
    break
  }
  case 'hold': {
    const [key, project, file] = args as [string, string, string]
    // from the end of what is there, so that the poll waits for what comes next
    let after = ''
    for (;;) {
      const page = await call(key, 'GET', `/events?projectId=${project}&limit=200${after}`)
      if (page.status !== 200) fail(`GET /events -> ${page.status} ${JSON.stringify(page.body)}`)
      if (page.body.nextCursor) after = `&after=${encodeURIComponent(page.body.nextCursor)}`
      if (!page.body.hasMore) break
    }
    const started = Date.now()
    try {
      const res = await call(key, 'GET', `/events?projectId=${project}&wait=60${after}`)
      writeFileSync(file, `${res.status} ${((Date.now() - started) / 1000).toFixed(2)} ${JSON.stringify(res.body).slice(0, 200)}\n`)
    } catch (err) {
      writeFileSync(file, `failed ${((Date.now() - started) / 1000).toFixed(2)} ${(err as Error).message}\n`)
    }
    break
  }
  case 'createdb': {
    const name = args[0] ?? fail('no database name')
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) fail(`not a plain database name: ${name}`)
    const sql = postgres(base, { max: 1, onnotice: () => {} })
    await sql.unsafe(`DROP DATABASE IF EXISTS ${name}`)
    await sql.unsafe(`CREATE DATABASE ${name}`)
    await sql.end()
    const url = new URL(base)
    url.pathname = `/${name}`
    console.log(url.toString())
    break
  }
  default:
    fail('unknown command')
}
