// Issue 57's candidate models side by side, in one run (docs/search.md's comparison table): for
// each model directory, in a process of its own, the model loaded as the server's worker loads it
// (src/search/embedder/minilm.ts), then the dev set's node texts embedded as the index embeds them
// (src/search/document.ts) and each query alone, as a search does. Quality comes from
// `npm run eval:search` with EMBEDDINGS_MODEL_DIR=<dir>; this prints what it costs.
//
//   bun bench/model-compare.ts [--file dev.json] <model dir>...
//
// Per model: the model file's size, the load time, a query's embedding (median and p99 over the
// dev set's queries), the milliseconds per node text when indexing (batches as the index sends
// them), and the process's RSS after both.

import { statSync } from 'node:fs'
import { join } from 'node:path'
import { embeddingTexts } from '../src/search/document'
import { checkMiniLm, MiniLmModel } from '../src/search/embedder/minilm'

const args = process.argv.slice(2)
const fileAt = args.indexOf('--file')
const file = fileAt >= 0 ? args[fileAt + 1]! : (process.env.SEARCH_DEV_FILE ?? join(import.meta.dir, '../../shared/eval/search-dev.json'))
const dirs = args.filter((a, i) => !a.startsWith('--') && (fileAt < 0 || i !== fileAt + 1))

if (process.env.MODEL_COMPARE_CHILD) {
  const dir = dirs[0]!
  const check = checkMiniLm(dir)
  if (!('model' in check)) throw new Error(`${dir}: ${JSON.stringify(check)}`)
  const dev = (await Bun.file(file).json()) as { tree: { data: Record<string, string> }[]; queries: { q: string }[] }
  const t0 = performance.now()
  const model = await MiniLmModel.load(check.model.files, undefined, check.model.recipe)
  await model.embed(['warm up'], true)
  const loadMs = performance.now() - t0
  const texts = dev.tree.flatMap((n) => embeddingTexts(n.data))
  const t1 = performance.now()
  for (let i = 0; i < texts.length; i += 64) await model.embed(texts.slice(i, i + 64))
  const perText = (performance.now() - t1) / texts.length
  const times: number[] = []
  for (const { q } of dev.queries) {
    const t = performance.now()
    await model.embed([q], true)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!
  const mb = (statSync(check.model.files.model).size / 1e6).toFixed(0)
  console.log(
    `| ${check.model.id} | ${mb} MB | ${(loadMs / 1000).toFixed(1)} s | ${at(0.5).toFixed(1)} / ${at(0.99).toFixed(1)} ms | ${perText.toFixed(2)} ms (${texts.length} texts) | ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB |`,
  )
  process.exit(0)
}

console.log('| embedder | model file | load | query p50 / p99 | per node text (indexing) | RSS |\n|---|---|---|---|---|---|')
for (const dir of dirs) {
  const child = Bun.spawnSync([process.execPath, import.meta.path, '--file', file, dir], {
    env: { ...process.env, MODEL_COMPARE_CHILD: '1' },
    stdout: 'inherit',
    stderr: 'inherit',
  })
  if (child.exitCode !== 0) process.exit(1)
}
