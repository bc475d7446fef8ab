import { readdirSync } from 'node:fs'
// The planning app on a 1,000-node project, in headless Chromium against a real server process
// on a fresh embedded database: the script's size (minified, and gzipped), time to interactive
// (navigation start → the page's `arbor:interactive` mark: key read, plan loaded, tree drawn,
// keys wired), the cost of opening the whole tree and of one arrow key on it, and the p50 from an
// agent's write (POST /mutate) to its label on the open page.
//
//   bun bench/app-tti.ts [--writes 20]

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'bun'
import { chromium } from 'playwright-core'
import { buildCanvas } from '../src/web/bundle'
import { CHROMIUM, freePort, ownerClient, spawnServer } from './lib/spawn'
import { percentile } from './search-core/metrics'

const args = process.argv.slice(2)
const at = args.indexOf('--writes')
const WRITES = at >= 0 ? Number(args[at + 1]) : 20

const js = await buildCanvas()
const styles = join(import.meta.dir, '..', 'src/web/styles')
const css = (
  await Promise.all(
    readdirSync(styles)
      .sort()
      .map((f) => Bun.file(join(styles, f)).text()),
  )
).join('\n') // as src/web/routes.ts serves it
console.log(
  `bundle: app.js ${(js.length / 1024).toFixed(1)} KB minified, ${(gzipSync(js).length / 1024).toFixed(1)} KB gzipped; app.css ${(css.length / 1024).toFixed(1)} KB (${(gzipSync(css).length / 1024).toFixed(1)} KB gzipped)`,
)

const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-app-'))
const server = await spawnServer({ PORT: String(freePort()), DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' }, 180_000)
const { key, call } = ownerClient(server)
try {
  await call('POST', '/api/v1/mutate', { action: 'addProject', project: { name: 'Thousand', id: 'thousand' } })
  // 10 goals × 3 needs × 3 bets × 29 jobs + 10 tasks = 10 + 30 + 90 + 2,610… trimmed to 1,000 nodes
  const mutations: any[] = []
  for (let g = 0; g < 10; g++) {
    mutations.push({
      action: 'add',
      node: { id: `draft-g${g}`, type: 'goal', data: { label: `Goal ${g}: researchers trust their notes` } },
    })
    for (let n = 0; n < 3; n++) {
      mutations.push({
        action: 'add',
        node: { id: `draft-n${g}-${n}`, type: 'need', parentId: `draft-g${g}`, data: { label: `Need ${g}.${n}` } },
      })
      for (let a = 0; a < 3; a++) {
        mutations.push({
          action: 'add',
          node: {
            id: `draft-a${g}-${n}-${a}`,
            type: 'approach',
            parentId: `draft-n${g}-${n}`,
            data: { label: `Bet ${g}.${n}.${a}`, size: 'car' },
          },
        })
        for (let j = 0; j < 9; j++)
          mutations.push({
            action: 'add',
            node: {
              type: 'job',
              parentId: `draft-a${g}-${n}-${a}`,
              data: { label: `Job ${g}.${n}.${a}.${j} is observable`, ...(j % 3 ? {} : { status: 'done' }) },
            },
          })
      }
    }
  }
  while (mutations.length < 1000) mutations.push({ action: 'add', node: { type: 'task', data: { label: `Task ${mutations.length}` } } })
  mutations.length = 1000
  const made = await call('POST', '/api/v1/mutate', { action: 'batch', projectId: 'thousand', mutations })
  if (!made.success) throw new Error(JSON.stringify(made).slice(0, 500))

  const browser = await chromium.launch(CHROMIUM)
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  const tti: number[] = []
  const loaded: number[] = []
  for (let i = 0; i < 5; i++) {
    await page.goto('about:blank') // a new document each time (the same address with a #key= would only change the hash)
    await page.goto(`${server.url}/app?projectId=thousand#key=${key}`)
    await page.waitForSelector('#tree')
    await page.waitForFunction(() => performance.getEntriesByName('arbor:interactive').length > 0)
    const [t, l] = await page.evaluate(() => [
      performance.getEntriesByName('arbor:interactive')[0]!.startTime,
      performance.getEntriesByName('arbor:loaded')[0]!.startTime,
    ])
    tti.push(t!)
    loaded.push(l!)
  }
  tti.sort((a, b) => a - b)
  loaded.sort((a, b) => a - b)
  console.log(
    `time to interactive, 1,000 nodes: p50 ${percentile(tti, 50).toFixed(0)} ms (min ${tti[0]!.toFixed(0)}, max ${tti.at(-1)!.toFixed(0)}; 5 loads); of which the API calls end at p50 ${percentile(loaded, 50).toFixed(0)} ms`,
  )

  // open everything (`*` on each goal), then time arrow keys on the full tree
  const goals = await page.$$eval('#tree > [role=treeitem]', (xs) =>
    xs.filter((x) => x.classList.contains('goal')).map((x) => (x as any).dataset.id),
  )
  const t0 = performance.now()
  for (const id of goals) {
    await page.focus(`[data-id="${id}"]`)
    await page.keyboard.press('*')
    for (const k of await page.$$eval(`[data-id="${id}"] [role=treeitem][aria-expanded="false"]`, (xs) =>
      xs.map((x) => (x as any).dataset.id),
    )) {
      await page.focus(`[data-id="${k}"]`)
      await page.keyboard.press('ArrowRight')
    }
  }
  const shown = await page.$$eval('#tree [role=treeitem]', (xs) => xs.length)
  console.log(`opened the whole tree: ${shown} items shown (${(performance.now() - t0).toFixed(0)} ms by keyboard, driver included)`)
  const keyMs = await page.evaluate(async () => {
    const doc = (globalThis as any).document
    doc.querySelector('#tree [role=treeitem]').focus()
    const out: number[] = []
    for (let i = 0; i < 50; i++) {
      const t = performance.now()
      doc.activeElement.dispatchEvent(new (globalThis as any).KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }))
      out.push(performance.now() - t)
    }
    return out.sort((a, b) => a - b)
  })
  console.log(
    `ArrowDown on the open tree: p50 ${percentile(keyMs, 50).toFixed(2)} ms, max ${keyMs.at(-1)!.toFixed(2)} ms (50 presses, handler and patch)`,
  )
  const redraw = await page.evaluate(async () => {
    const doc = (globalThis as any).document
    const t = performance.now()
    doc.querySelector('#mode-matrix').click()
    doc.querySelector('#mode-tree').click()
    return (performance.now() - t) / 2
  })
  console.log(`one full redraw of the open tree or the matrix: ${redraw.toFixed(0)} ms`)

  // an agent's write → its label on the page
  const jobs = (await call('GET', '/api/v1/nodes?projectId=thousand&type=job')).nodes as { id: string }[]
  const ms: number[] = []
  for (let i = 0; i < WRITES; i++) {
    const label = `Written by an agent #${i}`
    const started = performance.now()
    await call('POST', '/api/v1/mutate', { action: 'update', projectId: 'thousand', nodeId: jobs[i]!.id, data: { label } })
    await page.waitForFunction(
      (l) => [...(globalThis as any).document.querySelectorAll('.label')].some((x: any) => x.textContent === l),
      label,
      {
        polling: 50,
        timeout: 20_000,
      },
    )
    ms.push(performance.now() - started)
  }
  ms.sort((a, b) => a - b)
  console.log(
    `agent write → on the page, 1,000 nodes: p50 ${percentile(ms, 50).toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms (${WRITES} writes)`,
  )
  await browser.close()
} finally {
  server.proc.kill('SIGTERM')
  await server.proc.exited
  rmSync(dataDir, { recursive: true, force: true })
}
