/**
 * Evaluate the offline task classifier on a classification set
 * (format and metrics: shared/eval/README.md, "Classification files").
 *
 *   bun bench/eval-classify.ts [path/to/set.json] [--errors]
 *
 * Default set: ../shared/eval/classify-dev.json next to the repo root.
 * Prints kind accuracy, the memo/do-it confusion matrix and urgent P/R/F1,
 * where the positive class is "predicted do-it with urgent=true", over all items.
 */
import { readFileSync } from 'node:fs'
import { classifyTask, type TaskKind } from '../src/nodes/classify'

interface Item {
  label: string
  description?: string | null
  kind: TaskKind
  urgent: boolean
}

const args = process.argv.slice(2)
const showErrors = args.includes('--errors')
const pathArg = args.find((a) => !a.startsWith('--'))
const source = pathArg ?? new URL('../../shared/eval/classify-dev.json', import.meta.url)
const items: Item[] = JSON.parse(readFileSync(source, 'utf8')).items

const confusion: Record<TaskKind, Record<TaskKind, number>> = {
  memo: { memo: 0, 'do-it': 0 },
  'do-it': { memo: 0, 'do-it': 0 },
}
let correct = 0,
  tp = 0,
  fp = 0,
  fn = 0
const errors: string[] = []
const t0 = performance.now()

for (const item of items) {
  const got = classifyTask({ label: item.label, description: item.description })
  confusion[item.kind][got.kind]++
  if (got.kind === item.kind) correct++
  const predPos = got.kind === 'do-it' && got.urgent
  const goldPos = item.kind === 'do-it' && item.urgent
  if (predPos && goldPos) tp++
  else if (predPos) fp++
  else if (goldPos) fn++
  if (got.kind !== item.kind || predPos !== goldPos) {
    const g = `${item.kind}${goldPos ? '+U' : ''}`,
      p = `${got.kind}${predPos ? '+U' : ''}`
    errors.push(`  gold ${g.padEnd(7)} got ${p.padEnd(7)} ${item.label}${item.description ? ` || ${item.description}` : ''}`)
  }
}

const ms = performance.now() - t0
const p = tp + fp ? tp / (tp + fp) : 0
const r = tp + fn ? tp / (tp + fn) : 0
const f1 = p + r ? (2 * p * r) / (p + r) : 0
const f = (x: number) => x.toFixed(3)

console.log(`classify eval: ${typeof source === 'string' ? source : source.pathname} (${items.length} items)`)
console.log(`kind accuracy: ${f(correct / items.length)} (${correct}/${items.length})`)
console.log('confusion (rows = gold, columns = predicted):')
console.log(`  ${''.padEnd(8)}${'memo'.padStart(8)}${'do-it'.padStart(8)}`)
for (const gold of ['memo', 'do-it'] as const) {
  console.log(`  ${gold.padEnd(8)}${String(confusion[gold].memo).padStart(8)}${String(confusion[gold]['do-it']).padStart(8)}`)
}
console.log(`urgent: precision ${f(p)}  recall ${f(r)}  F1 ${f(f1)}  (TP ${tp}, FP ${fp}, FN ${fn})`)
console.log(`time: ${((ms / items.length) * 1000).toFixed(1)} µs/item (one cold pass, JIT warm-up included)`)
if (showErrors && errors.length) console.log(`errors:\n${errors.join('\n')}`)
process.exit(0)
