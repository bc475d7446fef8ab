// Time from POST /view-command to GET /view-state showing it applied (issue 12), with the real app
// in headless Chromium as the client: a server process (`bun src/main.ts`) on a fresh embedded
// database, the app opened on a small project, then N commands one after the other, each timed
// from the moment it is sent until last_applied_command.id equals its commandId (GET /view-state
// asked every 10 ms). Prints p50, p99 and max.
//
//   bun run bench:view [--commands 100]

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { freePort, spawnServer } from './lib/spawn'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const at = args.indexOf('--commands')
const N = at >= 0 ? Number(args[at + 1]) : 100

const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-view-'))
const server = await spawnServer({ PORT: String(freePort()), DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' })
const key = /Arbor API key for owner: (arb_\w+)/.exec(server.output())![1]!
const call = async (method: string, path: string, body?: unknown) =>
  (
    await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  ).json() as Promise<any>

await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'View bench', id: 'view' } })
const made = await call('POST', '/api/v1/mutate', {
  action: 'batch',
  projectId: 'view',
  mutations: [
    { action: 'add', node: { id: 'draft-g', type: 'goal', data: { label: 'Goal' } } },
    { action: 'add', node: { id: 'draft-n', type: 'need', parentId: 'draft-g', data: { label: 'Need' } } },
    { action: 'add', node: { id: 'draft-a', type: 'approach', parentId: 'draft-n', data: { label: 'Bet' } } },
    { action: 'add', node: { id: 'draft-j', type: 'job', parentId: 'draft-a', data: { label: 'Job' } } },
  ],
})
const ids = made.idMap as Record<string, string>
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
})
const page = await browser.newPage()
await page.goto(`${server.url}/app?projectId=view#key=${key}`)
await page.waitForSelector('#app:not([hidden])')

const commands = [
  { type: 'expandNode', nodeId: ids['draft-g'] },
  { type: 'selectNode', nodeId: ids['draft-n'] },
  { type: 'expandAll', nodeId: ids['draft-g'] },
  { type: 'collapseNode', nodeId: ids['draft-n'] },
  { type: 'setViewMode', mode: 'matrix' },
  { type: 'selectIteration', iterationName: 'Later' },
  { type: 'zoomToNode', nodeId: ids['draft-j'] },
  { type: 'focusGoals', goalIds: [ids['draft-g']] },
  { type: 'setViewMode', mode: 'tree' },
  { type: 'selectNode' },
]
const ms: number[] = []
for (let i = 0; i < N; i++) {
  const started = performance.now()
  const sent = await call('POST', '/api/v1/view-command', { projectId: 'view', command: commands[i % commands.length] })
  if (!sent.success) throw new Error(JSON.stringify(sent))
  for (;;) {
    const st = await call('GET', '/api/v1/view-state?projectId=view')
    if (st.last_applied_command?.id === sent.commandId) break
    await Bun.sleep(10)
  }
  ms.push(performance.now() - started)
}
ms.sort((a, b) => a - b)
console.log(`${N} view commands, POST /view-command → last_applied_command, the app in headless Chromium:`)
console.log(`p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms`)
await browser.close()
server.proc.kill('SIGTERM')
await server.proc.exited
rmSync(dataDir, { recursive: true, force: true })
